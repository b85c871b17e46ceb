package helm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/fundament-oss/ceph-rook/pluginruntime/helpers/helm/helmexec"
	"github.com/fundament-oss/ceph-rook/pluginruntime/pluginerrors"
)

// ServeRequest is the body of a helm helper binary (see package helmexec):
// it reads one helmexec.Request from in, runs InstallOrUpgrade, and writes
// one helmexec.Response to out, also when it fails. It returns the
// install's error, for the helper's exit code.
//
//	func main() {
//		... flags, logger, signal.NotifyContext ...
//		c, err := helm.NewFromKubeconfig(*kubeconfig, helm.WithLogger(logger))
//		if err != nil {
//			helm.WriteFailure(os.Stdout, err)
//			os.Exit(1)
//		}
//		if err := c.ServeRequest(ctx, os.Stdin, os.Stdout); err != nil {
//			os.Exit(1)
//		}
//	}
func (c *Client) ServeRequest(ctx context.Context, in io.Reader, out io.Writer) error {
	var req helmexec.Request
	dec := json.NewDecoder(in)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		err = fmt.Errorf("read the request: %w", err)
		return WriteFailure(out, err)
	}
	res, err := c.InstallOrUpgrade(ctx, Release{
		Name:      req.Name,
		Namespace: req.Namespace,
		Chart:     Chart{RepoURL: req.Chart.RepoURL, Name: req.Chart.Name, Version: req.Chart.Version, Digest: req.Chart.Digest},
		Values:    req.Values,
		Wait:      req.Wait,
		Timeout:   req.Timeout,
		Exclusive: req.Exclusive,
	})
	if err != nil {
		return WriteFailure(out, err)
	}
	return writeResponse(out, helmexec.Response{Action: string(res.Action), Revision: res.Release.Version})
}

// WriteFailure answers a helmexec.Runner with err's message and returns
// err; a helper uses it when it fails before ServeRequest (a bad
// kubeconfig).
func WriteFailure(out io.Writer, err error) error {
	_ = writeResponse(out, helmexec.Response{Error: err.Error(), Permanent: pluginerrors.IsPermanent(err)})
	return err
}

func writeResponse(out io.Writer, res helmexec.Response) error {
	if err := json.NewEncoder(out).Encode(res); err != nil {
		return fmt.Errorf("write the response: %w", err)
	}
	return nil
}

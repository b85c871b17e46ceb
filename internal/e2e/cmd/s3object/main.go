// Command s3object is the workload of just e2e's object step: it runs in a
// pod that takes a bucket claim's ConfigMap and Secret as its environment,
// exactly as the console's claim sheet tells a workload to, writes an object
// to the claimed bucket through the gateway's Service, reads it back and
// compares. It exits non-zero, saying why, when any of that fails.
package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// The environment Rook's bucket provisioner gives a claim: BUCKET_* from
// its ConfigMap, AWS_* from its Secret.
var env = []string{"BUCKET_HOST", "BUCKET_PORT", "BUCKET_NAME", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"}

const key = "e2e/hello.txt"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "s3object:", err)
		os.Exit(1)
	}
}

func run() error {
	v := map[string]string{}
	for _, name := range env {
		if v[name] = os.Getenv(name); v[name] == "" {
			return fmt.Errorf("%s is not set: the pod needs the claim's ConfigMap and Secret in envFrom", name)
		}
	}
	endpoint := net.JoinHostPort(v["BUCKET_HOST"], v["BUCKET_PORT"])
	s3, err := minio.New(endpoint, &minio.Options{
		Creds: credentials.NewStaticV4(v["AWS_ACCESS_KEY_ID"], v["AWS_SECRET_ACCESS_KEY"], ""),
		// RGW's default zone group answers to us-east-1; naming it saves
		// the client a location lookup.
		Region:       "us-east-1",
		BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	body := []byte("written by ceph-rook's e2e at " + time.Now().UTC().Format(time.RFC3339Nano))
	if _, err := s3.PutObject(ctx, v["BUCKET_NAME"], key, bytes.NewReader(body), int64(len(body)), minio.PutObjectOptions{ContentType: "text/plain"}); err != nil {
		return fmt.Errorf("put s3://%s/%s at %s: %w", v["BUCKET_NAME"], key, endpoint, err)
	}
	obj, err := s3.GetObject(ctx, v["BUCKET_NAME"], key, minio.GetObjectOptions{})
	if err != nil {
		return fmt.Errorf("get s3://%s/%s: %w", v["BUCKET_NAME"], key, err)
	}
	defer obj.Close()
	got, err := io.ReadAll(obj)
	if err != nil {
		return fmt.Errorf("read s3://%s/%s: %w", v["BUCKET_NAME"], key, err)
	}
	if !bytes.Equal(got, body) {
		return fmt.Errorf("s3://%s/%s reads back %q, wrote %q", v["BUCKET_NAME"], key, got, body)
	}
	fmt.Printf("wrote and read back s3://%s/%s (%d bytes) through %s\n", v["BUCKET_NAME"], key, len(body), endpoint)
	return nil
}

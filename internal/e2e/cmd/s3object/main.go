package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/fundament-oss/ceph-rook/internal/e2e/payload"
)

// The environment Rook's bucket provisioner gives a claim: BUCKET_* from
// its ConfigMap, AWS_* from its Secret.
var env = []string{"BUCKET_HOST", "BUCKET_PORT", "BUCKET_NAME", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"}

const key = "e2e/hello.txt"

func main() {
	mode := flag.String("payload", "", "write or verify the e2e's payload objects instead of the one hello object")
	flag.Parse()
	if err := run(*mode); err != nil {
		fmt.Fprintln(os.Stderr, "s3object:", err)
		os.Exit(1)
	}
}

func run(mode string) error {
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
	switch mode {
	case "write":
		return writePayload(ctx, s3, v["BUCKET_NAME"])
	case "verify":
		return verifyPayload(ctx, s3, v["BUCKET_NAME"])
	case "":
	default:
		return fmt.Errorf("-payload %q: want write or verify", mode)
	}
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

func writePayload(ctx context.Context, s3 *minio.Client, bucket string) error {
	for i := range payload.Objects {
		body := payload.Object(i)
		if _, err := s3.PutObject(ctx, bucket, payload.Name(i), bytes.NewReader(body), int64(len(body)), minio.PutObjectOptions{}); err != nil {
			return fmt.Errorf("put s3://%s/%s: %w", bucket, payload.Name(i), err)
		}
		fmt.Printf("wrote s3://%s/%s sha256 %s\n", bucket, payload.Name(i), payload.Sum(body))
	}
	return nil
}

func verifyPayload(ctx context.Context, s3 *minio.Client, bucket string) error {
	for i := range payload.Objects {
		obj, err := s3.GetObject(ctx, bucket, payload.Name(i), minio.GetObjectOptions{})
		if err != nil {
			return fmt.Errorf("get s3://%s/%s: %w", bucket, payload.Name(i), err)
		}
		got, err := io.ReadAll(obj)
		obj.Close()
		if err != nil {
			return fmt.Errorf("read s3://%s/%s: %w", bucket, payload.Name(i), err)
		}
		if err := payload.Check(i, got); err != nil {
			return err
		}
	}
	fmt.Printf("read back %d objects of s3://%s intact (SHA-256 of each as written)\n", payload.Objects, bucket)
	return nil
}

package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/fundament-oss/ceph-rook/internal/e2e/images"
)

func main() {
	var o images.Options
	flag.StringVar(&o.CacheDir, "cache", "", "e2e cache folder (default $CEPH_ROOK_CACHE/e2e or ~/.cache/ceph-rook/e2e)")
	flag.StringVar(&o.RootfsScript, "rootfs-script", "", "path of hack/e2e/ceph-rootfs.sh (default: found from the working directory)")
	sock := flag.String("import", "", "containerd socket to import the archives into (namespace k8s.io) with ctr")
	flag.BoolVar(&o.Upgrade, "upgrade", false, "also build the operator image of the Rook release the e2e's upgrade phase starts from")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	archives, err := images.Build(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "e2e/images: %d archives ready in %s\n", len(archives), time.Since(start).Round(time.Millisecond))
	for _, a := range archives {
		fmt.Printf("%s\t%s\n", a.Path, strings.Join(a.Names, " "))
	}
	if *sock == "" {
		return
	}
	for _, a := range archives {
		t := time.Now()
		cmd := exec.CommandContext(ctx, "ctr", "--address", *sock, "-n", "k8s.io", "images", "import", a.Path)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "e2e/images: importing %s: %v\n", a.Path, err)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "e2e/images: imported %s in %s\n", strings.Join(a.Names, " "), time.Since(t).Round(time.Millisecond))
	}
}

package main

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fundament-oss/ceph-rook/internal/e2e/ociimage"
)

type files []ociimage.File

func (f *files) String() string { return fmt.Sprint(*f) }

// Set reads SOURCE:PATH[:MODE], MODE in octal (default 0644).
func (f *files) Set(v string) error {
	parts := strings.Split(v, ":")
	if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || !strings.HasPrefix(parts[1], "/") {
		return fmt.Errorf("%q is not SOURCE:/PATH[:MODE]", v)
	}
	file := ociimage.File{Source: parts[0], Path: parts[1], Mode: 0o644}
	if len(parts) == 3 {
		mode, err := strconv.ParseUint(parts[2], 8, 32)
		if err != nil {
			return fmt.Errorf("%q: mode %q is not octal", v, parts[2])
		}
		file.Mode = fs.FileMode(mode)
	}
	*f = append(*f, file)
	return nil
}

func main() {
	name := flag.String("name", "", "the image's full reference (registry/repo:tag)")
	user := flag.String("user", "", "uid:gid the image runs as")
	entrypoint := flag.String("entrypoint", "", "the entrypoint, a path in the image")
	args := flag.String("args", "", "comma-separated default arguments")
	cache := flag.String("cache", "", "archive folder (default $CEPH_ROOK_CACHE/e2e/images)")
	var fl files
	flag.Var(&fl, "file", "SOURCE:/PATH[:MODE] (repeatable)")
	flag.Parse()
	dir := *cache
	if dir == "" {
		root := os.Getenv("CEPH_ROOK_CACHE")
		if root == "" {
			home, _ := os.UserHomeDir()
			root = filepath.Join(home, ".cache", "ceph-rook")
		}
		dir = filepath.Join(root, "e2e", "images")
	}
	img := ociimage.Image{
		Names:  []string{*name},
		Files:  fl,
		Config: ociimage.Config{Entrypoint: []string{*entrypoint}, User: *user},
	}
	if *args != "" {
		img.Config.Cmd = strings.Split(*args, ",")
	}
	path, _, err := ociimage.Ensure(dir, img)
	if err != nil {
		fmt.Fprintln(os.Stderr, "binimage:", err)
		os.Exit(1)
	}
	fmt.Println(path)
}

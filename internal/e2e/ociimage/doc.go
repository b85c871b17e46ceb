// Package ociimage writes container image archives without a registry or a
// container engine: a Docker-format image tarball (what `docker save` writes)
// that `ctr -n k8s.io images import` accepts and names exactly as given.
//
// An image is at most two layers: an optional base root filesystem tarball
// (for example a Debian root made by mmdebstrap) and one layer holding extra
// files (for example a static Go binary). Write builds the archive; Ensure
// keeps archives in a folder under a content key so a second call is free.
//
//	path, built, err := ociimage.Ensure(dir, ociimage.Image{
//		Names:  []string{"registry.k8s.io/pause:3.10"},
//		Files:  []ociimage.File{{Path: "/pause", Mode: 0o755, Source: bin}},
//		Config: ociimage.Config{Entrypoint: []string{"/pause"}},
//	})
package ociimage

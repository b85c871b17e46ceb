package ociimage

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// formatVersion is part of every content key: bump it when Write's output
// changes for the same Image.
const formatVersion = 1

// epoch is the timestamp of everything Write creates, so that the same
// Image always gives the same layers and image ID.
var epoch = time.Unix(0, 0).UTC()

// Image describes one image to write.
type Image struct {
	// Names are the full references the image is imported under, each with
	// an explicit registry and tag ("quay.io/ceph/ceph:v18.2.7",
	// "docker.io/rook/ceph:v1.18.0"). At least one.
	Names []string
	// Base is an optional root filesystem tarball (plain or gzip), used
	// unchanged as the first layer.
	Base string
	// Files go into one layer above Base. Missing parent directories are
	// added as root-owned 0755 directories; directories that exist in Base
	// are left as they are.
	Files []File
	// Config is the image's runtime configuration.
	Config Config
}

// File is one regular file in the files layer.
type File struct {
	// Path is the absolute path in the image ("/usr/local/bin/rook").
	Path string
	// Mode holds the permission bits (and setuid/setgid/sticky); zero means
	// 0644.
	Mode fs.FileMode
	// UID and GID own the file.
	UID, GID int
	// Content is the file's bytes, unless Source is set.
	Content []byte
	// Source is a file on this machine to copy, read when the image is
	// written (and hashed for the content key).
	Source string
}

// Config is the part of the OCI image configuration a container runtime uses.
type Config struct {
	Entrypoint []string
	Cmd        []string
	// Env entries are "NAME=value".
	Env []string
	// User is "uid", "uid:gid" or a user name known to the image.
	User       string
	WorkingDir string
	Labels     map[string]string
}

// Validate reports the first problem with img, or nil.
func (img Image) Validate() error {
	if len(img.Names) == 0 {
		return errors.New("ociimage: an image needs at least one name")
	}
	for _, n := range img.Names {
		if _, err := parseName(n); err != nil {
			return err
		}
	}
	seen := map[string]bool{}
	for _, f := range img.Files {
		p, err := cleanPath(f.Path)
		if err != nil {
			return err
		}
		if seen[p] {
			return fmt.Errorf("ociimage: file %s listed twice", p)
		}
		seen[p] = true
		if f.Source != "" && f.Content != nil {
			return fmt.Errorf("ociimage: file %s has both Content and Source", p)
		}
		if f.UID < 0 || f.GID < 0 {
			return fmt.Errorf("ociimage: file %s has a negative owner", p)
		}
	}
	for _, e := range img.Config.Env {
		if !strings.Contains(e, "=") {
			return fmt.Errorf("ociimage: env entry %q is not NAME=value", e)
		}
	}
	return nil
}

// parseName accepts only full tag references, so that the name containerd
// stores is the one the manifests use.
func parseName(n string) (name.Tag, error) {
	t, err := name.NewTag(n, name.StrictValidation)
	if err != nil {
		return name.Tag{}, fmt.Errorf("ociimage: image name %q: want registry/repository:tag: %w", n, err)
	}
	return t, nil
}

func cleanPath(p string) (string, error) {
	if !strings.HasPrefix(p, "/") {
		return "", fmt.Errorf("ociimage: file path %q is not absolute", p)
	}
	c := path.Clean(p)
	if c == "/" {
		return "", fmt.Errorf("ociimage: file path %q names the root", p)
	}
	return c, nil
}

// Key is a content key for img: it changes when any name, the config, a
// file's path, owner, mode or bytes, or the base tarball (path, size and
// modification time; a cached base is never rewritten in place) changes.
func (img Image) Key() (string, error) {
	if err := img.Validate(); err != nil {
		return "", err
	}
	type fileKey struct {
		Path     string
		Mode     fs.FileMode
		UID, GID int
		SHA256   string
	}
	k := struct {
		Format int
		Arch   string
		Names  []string
		Base   string
		Files  []fileKey
		Config Config
	}{Format: formatVersion, Arch: runtime.GOARCH, Names: img.Names, Config: img.Config}
	if img.Base != "" {
		abs, err := filepath.Abs(img.Base)
		if err != nil {
			return "", err
		}
		st, err := os.Stat(abs)
		if err != nil {
			return "", fmt.Errorf("ociimage: base: %w", err)
		}
		k.Base = fmt.Sprintf("%s %d %d", abs, st.Size(), st.ModTime().UnixNano())
	}
	for _, f := range img.Files {
		h := sha256.New()
		if err := f.copyTo(h); err != nil {
			return "", err
		}
		p, _ := cleanPath(f.Path)
		k.Files = append(k.Files, fileKey{Path: p, Mode: f.Mode, UID: f.UID, GID: f.GID, SHA256: hex.EncodeToString(h.Sum(nil))})
	}
	sort.Slice(k.Files, func(i, j int) bool { return k.Files[i].Path < k.Files[j].Path })
	b, err := json.Marshal(k)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:20], nil
}

func (f File) copyTo(w io.Writer) error {
	if f.Source == "" {
		_, err := w.Write(f.Content)
		return err
	}
	r, err := os.Open(f.Source)
	if err != nil {
		return fmt.Errorf("ociimage: file %s: %w", f.Path, err)
	}
	defer r.Close()
	_, err = io.Copy(w, r)
	return err
}

// Ensure writes img into dir as <first name, sanitized>-<key>.tar unless that
// archive is already there, and returns its path and whether it was built
// now.
func Ensure(dir string, img Image) (archive string, built bool, err error) {
	key, err := img.Key()
	if err != nil {
		return "", false, err
	}
	archive = filepath.Join(dir, sanitize(img.Names[0])+"-"+key+".tar")
	if _, err := os.Stat(archive); err == nil {
		return archive, false, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", false, err
	}
	if err := Write(archive, img); err != nil {
		return "", false, err
	}
	return archive, true, nil
}

func sanitize(n string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			return r
		}
		return '_'
	}, n)
}

// Write writes img as a Docker-format image archive at archive (through a
// temporary file, renamed at the end).
func Write(archive string, img Image) error {
	if err := img.Validate(); err != nil {
		return err
	}
	v1img, err := Build(img)
	if err != nil {
		return err
	}
	refs := map[name.Reference]v1.Image{}
	for _, n := range img.Names {
		t, _ := parseName(n)
		refs[t] = v1img
	}
	tmp := archive + ".tmp"
	if err := tarball.MultiRefWriteToFile(tmp, refs); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("ociimage: writing %s: %w", archive, err)
	}
	return os.Rename(tmp, archive)
}

// Build returns img as a go-containerregistry image (for callers that want
// another output format, e.g. an OCI layout).
func Build(img Image) (v1.Image, error) {
	if err := img.Validate(); err != nil {
		return nil, err
	}
	var layers []v1.Layer
	var baseDirs map[string]bool
	if img.Base != "" {
		// Compress once, not once for the digest and again for the archive.
		l, err := tarball.LayerFromFile(img.Base, tarball.WithCompressionLevel(gzip.BestSpeed), tarball.WithCompressedCaching)
		if err != nil {
			return nil, fmt.Errorf("ociimage: base layer %s: %w", img.Base, err)
		}
		layers = append(layers, l)
		if len(img.Files) > 0 {
			if baseDirs, err = tarDirs(img.Base); err != nil {
				return nil, err
			}
		}
	}
	if len(img.Files) > 0 {
		b, err := filesLayer(img.Files, baseDirs)
		if err != nil {
			return nil, err
		}
		l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(b)), nil
		}, tarball.WithCompressionLevel(gzip.BestSpeed))
		if err != nil {
			return nil, err
		}
		layers = append(layers, l)
	}
	c := img.Config
	cf := &v1.ConfigFile{
		Architecture: runtime.GOARCH,
		OS:           "linux",
		Created:      v1.Time{Time: epoch},
		Config: v1.Config{
			Entrypoint: c.Entrypoint,
			Cmd:        c.Cmd,
			Env:        c.Env,
			User:       c.User,
			WorkingDir: c.WorkingDir,
			Labels:     c.Labels,
		},
		RootFS: v1.RootFS{Type: "layers"},
	}
	base, err := mutate.ConfigFile(empty.Image, cf)
	if err != nil {
		return nil, err
	}
	adds := make([]mutate.Addendum, 0, len(layers))
	for i, l := range layers {
		by := "ociimage: base root filesystem"
		if i == len(layers)-1 && len(img.Files) > 0 {
			by = "ociimage: files"
		}
		adds = append(adds, mutate.Addendum{Layer: l, History: v1.History{Created: v1.Time{Time: epoch}, CreatedBy: by}})
	}
	return mutate.Append(base, adds...)
}

// tarDirs lists the directories in a (possibly gzip) tarball, as clean
// absolute paths.
func tarDirs(p string) (map[string]bool, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	var magic [2]byte
	if _, err := io.ReadFull(f, magic[:]); err == nil && magic == [2]byte{0x1f, 0x8b} {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, err
		}
		gz, err := gzip.NewReader(f)
		if err != nil {
			return nil, err
		}
		defer gz.Close()
		r = gz
	} else if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	dirs := map[string]bool{"/": true}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return dirs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("ociimage: reading base %s: %w", p, err)
		}
		if h.Typeflag == tar.TypeDir {
			dirs[path.Clean("/"+h.Name)] = true
		}
	}
}

// filesLayer is an uncompressed tar of files plus the parent directories
// that dirs (the base's directories) lacks, in a stable order.
func filesLayer(files []File, dirs map[string]bool) ([]byte, error) {
	sorted := append([]File(nil), files...)
	for i := range sorted {
		sorted[i].Path, _ = cleanPath(sorted[i].Path)
	}
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	written := map[string]bool{}
	for _, f := range sorted {
		var parents []string
		for d := path.Dir(f.Path); d != "/"; d = path.Dir(d) {
			parents = append(parents, d)
		}
		for i := len(parents) - 1; i >= 0; i-- {
			d := parents[i]
			if dirs[d] || written[d] {
				continue
			}
			written[d] = true
			if err := tw.WriteHeader(&tar.Header{
				Typeflag: tar.TypeDir, Name: strings.TrimPrefix(d, "/") + "/", Mode: 0o755,
				ModTime: epoch, Format: tar.FormatPAX,
			}); err != nil {
				return nil, err
			}
		}
		var content bytes.Buffer
		if err := f.copyTo(&content); err != nil {
			return nil, err
		}
		mode := f.Mode
		if mode == 0 {
			mode = 0o644
		}
		if err := tw.WriteHeader(&tar.Header{
			Typeflag: tar.TypeReg, Name: strings.TrimPrefix(f.Path, "/"), Mode: tarMode(mode),
			Uid: f.UID, Gid: f.GID, Size: int64(content.Len()), ModTime: epoch, Format: tar.FormatPAX,
		}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(content.Bytes()); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func tarMode(m fs.FileMode) int64 {
	t := int64(m.Perm())
	if m&fs.ModeSetuid != 0 {
		t |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		t |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		t |= 0o1000
	}
	return t
}

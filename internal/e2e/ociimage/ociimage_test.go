package ociimage

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	ok := Image{Names: []string{"registry.k8s.io/pause:3.10"}}
	tests := []struct {
		name    string
		img     Image
		wantErr string
	}{
		{"minimal", ok, ""},
		{"two names", Image{Names: []string{"quay.io/ceph/ceph:v18.2.7", "docker.io/rook/ceph:v1.18.0"}}, ""},
		{"no name", Image{}, "at least one name"},
		{"no registry", Image{Names: []string{"rook/ceph:v1.18.0"}}, "want registry/repository:tag"},
		{"no tag", Image{Names: []string{"docker.io/rook/ceph"}}, "want registry/repository:tag"},
		{"digest", Image{Names: []string{"docker.io/rook/ceph@sha256:" + strings.Repeat("a", 64)}}, "want registry/repository:tag"},
		{"relative file", Image{Names: ok.Names, Files: []File{{Path: "usr/bin/x"}}}, "not absolute"},
		{"root file", Image{Names: ok.Names, Files: []File{{Path: "/"}}}, "names the root"},
		{"duplicate file", Image{Names: ok.Names, Files: []File{{Path: "/a"}, {Path: "/b/../a"}}}, "listed twice"},
		{"content and source", Image{Names: ok.Names, Files: []File{{Path: "/a", Content: []byte("x"), Source: "/etc/hostname"}}}, "both Content and Source"},
		{"negative owner", Image{Names: ok.Names, Files: []File{{Path: "/a", UID: -1}}}, "negative owner"},
		{"bad env", Image{Names: ok.Names, Config: Config{Env: []string{"PATH"}}}, "NAME=value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.img.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Validate() = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestKey(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "bin")
	writeFile(t, src, "binary-1")
	base := Image{
		Names:  []string{"registry.k8s.io/pause:3.10"},
		Files:  []File{{Path: "/pause", Mode: 0o755, Source: src}, {Path: "/etc/x", Content: []byte("x")}},
		Config: Config{Entrypoint: []string{"/pause"}},
	}
	k0 := mustKey(t, base)
	if k1 := mustKey(t, base); k1 != k0 {
		t.Fatalf("Key is not stable: %s then %s", k0, k1)
	}
	reordered := base
	reordered.Files = []File{base.Files[1], base.Files[0]}
	if k := mustKey(t, reordered); k != k0 {
		t.Errorf("file order changed the key")
	}

	changes := map[string]func(img *Image){
		"name":       func(img *Image) { img.Names = []string{"registry.k8s.io/pause:3.9"} },
		"entrypoint": func(img *Image) { img.Config.Entrypoint = []string{"/pause", "-v"} },
		"user":       func(img *Image) { img.Config.User = "65535:65535" },
		"env":        func(img *Image) { img.Config.Env = []string{"A=b"} },
		"mode":       func(img *Image) { img.Files = []File{{Path: "/pause", Mode: 0o700, Source: src}, base.Files[1]} },
		"owner": func(img *Image) {
			img.Files = []File{{Path: "/pause", Mode: 0o755, UID: 1, Source: src}, base.Files[1]}
		},
		"content": func(img *Image) { img.Files = []File{base.Files[0], {Path: "/etc/x", Content: []byte("y")}} },
		"path":    func(img *Image) { img.Files = []File{base.Files[0], {Path: "/etc/y", Content: []byte("x")}} },
	}
	for what, change := range changes {
		img := base
		img.Config.Env = append([]string(nil), base.Config.Env...)
		change(&img)
		if k := mustKey(t, img); k == k0 {
			t.Errorf("changing the %s kept the key %s", what, k)
		}
	}

	writeFile(t, src, "binary-2")
	if k := mustKey(t, base); k == k0 {
		t.Errorf("changing the source file's bytes kept the key")
	}

	withBase := base
	withBase.Base = filepath.Join(dir, "rootfs.tar")
	writeTar(t, withBase.Base, false, map[string]string{"etc/": "", "etc/os-release": "a"})
	kb := mustKey(t, withBase)
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(withBase.Base, later, later); err != nil {
		t.Fatal(err)
	}
	if k := mustKey(t, withBase); k == kb {
		t.Errorf("a rewritten base kept the key")
	}
	withBase.Base = filepath.Join(dir, "missing.tar")
	if _, err := withBase.Key(); err == nil {
		t.Errorf("Key with a missing base: want an error")
	}
}

func TestWriteArchive(t *testing.T) {
	for _, gz := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain base", true: "gzip base"}[gz], func(t *testing.T) {
			dir := t.TempDir()
			basePath := filepath.Join(dir, "rootfs.tar")
			writeTar(t, basePath, gz, map[string]string{
				"./":               "",
				"./etc/":           "",
				"./etc/os-release": "ID=debian\n",
				"./usr/":           "",
				"./usr/local/":     "",
			})
			src := filepath.Join(dir, "rook")
			writeFile(t, src, "#!/bin/sh\necho rook\n")
			img := Image{
				Names: []string{"docker.io/rook/ceph:v1.18.0", "quay.io/example/rook:test"},
				Base:  basePath,
				Files: []File{
					{Path: "/usr/local/bin/rook", Mode: 0o755, Source: src},
					{Path: "/etc/rook/hello", Content: []byte("hi"), UID: 2016, GID: 2016},
				},
				Config: Config{
					Entrypoint: []string{"/usr/local/bin/rook"},
					Cmd:        []string{""},
					Env:        []string{"PATH=/usr/local/bin:/usr/bin:/bin"},
					User:       "2016",
					WorkingDir: "/",
					Labels:     map[string]string{"e2e": "yes"},
				},
			}
			archive, built, err := Ensure(filepath.Join(dir, "out"), img)
			if err != nil {
				t.Fatal(err)
			}
			if !built {
				t.Fatalf("first Ensure did not build")
			}
			st, _ := os.Stat(archive)
			again, built, err := Ensure(filepath.Join(dir, "out"), img)
			if err != nil || built || again != archive {
				t.Fatalf("second Ensure = %s, %v, %v; want %s, false, nil", again, built, err, archive)
			}
			if st2, _ := os.Stat(archive); !st2.ModTime().Equal(st.ModTime()) {
				t.Errorf("second Ensure rewrote the archive")
			}

			entries := readTar(t, archive, false)
			var manifest []struct {
				Config   string
				RepoTags []string
				Layers   []string
			}
			if err := json.Unmarshal(entries["manifest.json"], &manifest); err != nil {
				t.Fatalf("manifest.json: %v", err)
			}
			if len(manifest) != 1 {
				t.Fatalf("manifest has %d images, want 1", len(manifest))
			}
			m := manifest[0]
			tags := append([]string(nil), m.RepoTags...)
			sort.Strings(tags)
			if strings.Join(tags, ",") != "docker.io/rook/ceph:v1.18.0,quay.io/example/rook:test" {
				t.Errorf("RepoTags = %v", m.RepoTags)
			}
			if len(m.Layers) != 2 {
				t.Fatalf("layers = %v, want base + files", m.Layers)
			}

			var cfg struct {
				Architecture, OS string
				Config           struct {
					Entrypoint, Cmd, Env []string
					User, WorkingDir     string
					Labels               map[string]string
				}
				RootFS struct {
					DiffIDs []string `json:"diff_ids"`
				} `json:"rootfs"`
			}
			if err := json.Unmarshal(entries[m.Config], &cfg); err != nil {
				t.Fatalf("config: %v", err)
			}
			if cfg.Architecture != runtime.GOARCH || cfg.OS != "linux" {
				t.Errorf("platform = %s/%s", cfg.OS, cfg.Architecture)
			}
			c := cfg.Config
			if strings.Join(c.Entrypoint, " ") != "/usr/local/bin/rook" || len(c.Cmd) != 1 || c.Cmd[0] != "" ||
				c.User != "2016" || c.WorkingDir != "/" || c.Labels["e2e"] != "yes" || len(c.Env) != 1 {
				t.Errorf("config = %+v", c)
			}
			if len(cfg.RootFS.DiffIDs) != 2 {
				t.Errorf("diff IDs = %v", cfg.RootFS.DiffIDs)
			}

			base := readTarHeaders(t, entries[m.Layers[0]])
			if _, ok := base["./etc/os-release"]; !ok {
				t.Errorf("base layer lost its files: %v", keys(base))
			}
			files := readTarHeaders(t, entries[m.Layers[1]])
			// usr/ and usr/local/ and etc/ are in the base: not repeated.
			wantNames := []string{"etc/rook/", "etc/rook/hello", "usr/local/bin/", "usr/local/bin/rook"}
			if got := keys(files); strings.Join(got, " ") != strings.Join(wantNames, " ") {
				t.Errorf("files layer = %v, want %v", got, wantNames)
			}
			if h := files["usr/local/bin/rook"]; h.Mode != 0o755 || h.Uid != 0 {
				t.Errorf("rook: mode %o uid %d", h.Mode, h.Uid)
			}
			if h := files["etc/rook/hello"]; h.Mode != 0o644 || h.Uid != 2016 || h.Gid != 2016 || h.Size != 2 {
				t.Errorf("hello: mode %o owner %d:%d size %d", h.Mode, h.Uid, h.Gid, h.Size)
			}
			if h := files["usr/local/bin/"]; h.Typeflag != tar.TypeDir || h.Mode != 0o755 {
				t.Errorf("usr/local/bin/: type %c mode %o", h.Typeflag, h.Mode)
			}
		})
	}
}

func TestWriteIsReproducible(t *testing.T) {
	dir := t.TempDir()
	img := Image{
		Names:  []string{"registry.k8s.io/pause:3.10"},
		Files:  []File{{Path: "/pause", Mode: 0o755, Content: []byte("not really a binary")}},
		Config: Config{Entrypoint: []string{"/pause"}, User: "65535:65535"},
	}
	a, b := filepath.Join(dir, "a.tar"), filepath.Join(dir, "b.tar")
	if err := Write(a, img); err != nil {
		t.Fatal(err)
	}
	if err := Write(b, img); err != nil {
		t.Fatal(err)
	}
	ba, _ := os.ReadFile(a)
	bb, _ := os.ReadFile(b)
	if !bytes.Equal(ba, bb) {
		t.Errorf("two writes of the same image differ")
	}
	entries := readTar(t, a, false)
	var manifest []struct{ Layers []string }
	if err := json.Unmarshal(entries["manifest.json"], &manifest); err != nil || len(manifest) != 1 || len(manifest[0].Layers) != 1 {
		t.Fatalf("manifest = %s (%v)", entries["manifest.json"], err)
	}
	// No base: /pause sits at the root, no directory entries at all.
	if got := keys(readTarHeaders(t, entries[manifest[0].Layers[0]])); strings.Join(got, " ") != "pause" {
		t.Errorf("layer = %v", got)
	}
	if _, err := os.Stat(a + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("temporary file left behind")
	}
}

func TestWriteErrors(t *testing.T) {
	dir := t.TempDir()
	if err := Write(filepath.Join(dir, "x.tar"), Image{Names: []string{"pause"}}); err == nil {
		t.Errorf("short name: want an error")
	}
	err := Write(filepath.Join(dir, "x.tar"), Image{
		Names: []string{"registry.k8s.io/pause:3.10"},
		Files: []File{{Path: "/pause", Source: filepath.Join(dir, "missing")}},
	})
	if err == nil {
		t.Errorf("missing source: want an error")
	}
	if _, err := os.Stat(filepath.Join(dir, "x.tar")); !os.IsNotExist(err) {
		t.Errorf("a failed Write left an archive")
	}
}

func TestSanitize(t *testing.T) {
	for in, want := range map[string]string{
		"quay.io/ceph/ceph:v18.2.7":   "quay.io_ceph_ceph_v18.2.7",
		"registry.k8s.io/pause:3.10":  "registry.k8s.io_pause_3.10",
		"docker.io/rook/ceph:v1.18.0": "docker.io_rook_ceph_v1.18.0",
	} {
		if got := sanitize(in); got != want {
			t.Errorf("sanitize(%q) = %q, want %q", in, got, want)
		}
	}
}

func mustKey(t *testing.T, img Image) string {
	t.Helper()
	k, err := img.Key()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeTar writes entries (a name ending in "/" is a directory) in name order.
func writeTar(t *testing.T, p string, gz bool, entries map[string]string) {
	t.Helper()
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var w io.Writer = f
	var zw *gzip.Writer
	if gz {
		zw = gzip.NewWriter(f)
		w = zw
	}
	tw := tar.NewWriter(w)
	names := make([]string, 0, len(entries))
	for n := range entries {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		h := &tar.Header{Name: n, Mode: 0o644, Typeflag: tar.TypeReg, Size: int64(len(entries[n]))}
		if strings.HasSuffix(n, "/") {
			h = &tar.Header{Name: n, Mode: 0o755, Typeflag: tar.TypeDir}
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(entries[n])); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func readTar(t *testing.T, p string, gz bool) map[string][]byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return tarEntries(t, b, gz)
}

func tarEntries(t *testing.T, b []byte, gz bool) map[string][]byte {
	t.Helper()
	var r io.Reader = bytes.NewReader(b)
	if gz {
		zr, err := gzip.NewReader(r)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	}
	out := map[string][]byte{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		out[h.Name] = data
	}
}

// readTarHeaders reads a gzip layer blob's headers by name.
func readTarHeaders(t *testing.T, blob []byte) map[string]*tar.Header {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(blob))
	if err != nil {
		t.Fatalf("layer is not gzip: %v", err)
	}
	out := map[string]*tar.Header{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out[h.Name] = h
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Command axe fetches axe-core, the accessibility engine the console's
// browser tests run on every page and sheet, from the npm registry with npm
// itself (`npm pack`), checks the archive against the integrity pinned here,
// and caches its browser bundle and licence outside the clone (see
// internal/cachedir). Nothing happens when the bundle is already cached.
//
// The bundle is never committed and never served by the plugin: only the
// development console's test-only path (devconsole.Options.TestFiles) serves
// it, to the browser tests.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/fundament-oss/ceph-rook/internal/cachedir"
)

// axeIntegrity is the registry's dist.integrity of axe-core@4.10.3 (npm
// view axe-core@4.10.3 dist.integrity): the archive must hash to it.
const axeIntegrity = "sha512-Xm7bpRXnDSX2YE2YFfBk2FnF0ep6tmG7xPh8iHee8MIcrgq762Nkce856dYtJYLkuIoYZvGfTs/PbZhideTcEg=="

// cached are the files taken from the package, by their path in it.
var cached = map[string]string{
	"package/axe.min.js": cachedir.AxeCoreScript(),
	"package/LICENSE":    filepath.Join(cachedir.AxeCoreDir(), "LICENSE"),
}

func main() {
	force := flag.Bool("force", false, "fetch again even when cached")
	flag.Parse()
	if err := run(*force); err != nil {
		fmt.Fprintln(os.Stderr, "hack/axe:", err)
		os.Exit(1)
	}
	fmt.Println(cachedir.AxeCoreScript())
}

func run(force bool) error {
	if !force && allExist() {
		return nil
	}
	archive, err := pack()
	if err != nil {
		return err
	}
	if err := checkIntegrity(archive); err != nil {
		return err
	}
	if err := os.MkdirAll(cachedir.AxeCoreDir(), 0o755); err != nil {
		return err
	}
	return extract(archive)
}

func allExist() bool {
	for _, dst := range cached {
		if _, err := os.Stat(dst); err != nil {
			return false
		}
	}
	return true
}

// pack downloads the package archive with npm into a temporary folder.
func pack() ([]byte, error) {
	if _, err := exec.LookPath("npm"); err != nil {
		return nil, errors.New("npm is needed to fetch axe-core (apt-get install -y npm)")
	}
	tmp, err := os.MkdirTemp("", "axe-core-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command("npm", "pack", "--json", "--silent", "--pack-destination", tmp, "axe-core@"+cachedir.AxeCoreVersion)
	cmd.Dir = tmp // outside any package.json
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("npm pack axe-core@%s: %w\n%s", cachedir.AxeCoreVersion, err, stderr.Bytes())
	}
	var packed []struct{ Filename string }
	if err := json.Unmarshal(out, &packed); err != nil || len(packed) != 1 {
		return nil, fmt.Errorf("read npm pack output %q: %v", out, err)
	}
	return os.ReadFile(filepath.Join(tmp, filepath.Base(packed[0].Filename)))
}

func checkIntegrity(archive []byte) error {
	sum := sha512.Sum512(archive)
	if got := "sha512-" + base64.StdEncoding.EncodeToString(sum[:]); got != axeIntegrity {
		return fmt.Errorf("axe-core@%s has integrity %s, want %s: refusing to use it", cachedir.AxeCoreVersion, got, axeIntegrity)
	}
	return nil
}

// extract writes the cached files from the archive, each atomically.
func extract(archive []byte) error {
	gz, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		return err
	}
	tr := tar.NewReader(gz)
	found := 0
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("read axe-core archive: %w", err)
		}
		dst, ok := cached[hdr.Name]
		if !ok {
			continue
		}
		if err := writeFile(dst, tr); err != nil {
			return err
		}
		found++
	}
	if found != len(cached) {
		return fmt.Errorf("axe-core archive holds %d of the %d files expected", found, len(cached))
	}
	return nil
}

func writeFile(dst string, r io.Reader) error {
	tmp := dst + ".tmp"
	out, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, r); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}

// Package console serves a plugin's console pages, usually embedded in the
// plugin binary, as the ConsoleProvider file system:
//
//	//go:embed all:console
//	var consoleFiles embed.FS
//
//	func (p *plugin) ConsoleAssets() http.FileSystem {
//		return p.assets // built once with console.MustFileSystem(consoleFiles, "console")
//	}
package console

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"path"
)

// FileSystem returns the files under dir of fsys as an http.FileSystem.
//
// It refuses a tree without a single .html file: that is almost always an
// embed pattern that matched nothing useful (a wrong folder, files added
// after the build), and a plugin serving an empty console is worse than one
// that fails at start with the reason.
func FileSystem(fsys fs.FS, dir string) (http.FileSystem, error) {
	sub := fsys
	if dir != "" && dir != "." {
		var err error
		if sub, err = fs.Sub(fsys, dir); err != nil {
			return nil, fmt.Errorf("console assets %q: %w", dir, err)
		}
	}
	found, err := hasHTML(sub)
	if err != nil {
		return nil, fmt.Errorf("console assets %q: %w", dir, err)
	}
	if !found {
		return nil, fmt.Errorf("console assets %q: no .html file; check the embed pattern", dir)
	}
	return http.FS(sub), nil
}

// MustFileSystem is FileSystem for assets embedded at build time, where a
// missing page is a build mistake. It panics on error.
func MustFileSystem(fsys fs.FS, dir string) http.FileSystem {
	hfs, err := FileSystem(fsys, dir)
	if err != nil {
		panic(err)
	}
	return hfs
}

var errFound = errors.New("found")

func hasHTML(fsys fs.FS) (bool, error) {
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && path.Ext(p) == ".html" {
			return errFound
		}
		return nil
	})
	switch {
	case errors.Is(err, errFound):
		return true, nil
	case err != nil:
		return false, err
	default:
		return false, nil
	}
}

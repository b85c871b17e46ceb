package main

import (
	"embed"
	"net/http"

	"github.com/fundament-oss/ceph-rook/pluginruntime/console"
)

// consoleFiles are the hand-written console pages (no build step): the HTML,
// the ES modules, the stylesheet and nothing else, so a stray file in
// console/ is not served.
//
//go:embed console/*.html console/*.js console/*.css
var consoleFiles embed.FS

// consoleAssets is what the plugin serves at /console/ as a
// pluginruntime.ConsoleProvider: the files of console/, at the root.
func consoleAssets() http.FileSystem {
	return console.MustFileSystem(consoleFiles, "console")
}

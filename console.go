package main

import (
	"embed"
	"io/fs"
	"net/http"
)

// consoleFiles are the hand-written console pages (no build step): the HTML,
// the ES modules and nothing else, so a stray file in console/ is not served.
//
//go:embed console/*.html console/*.js
var consoleFiles embed.FS

// consoleAssets is what the plugin serves at /console/ as a
// pluginruntime.ConsoleProvider: the files of console/, at the root.
func consoleAssets() http.FileSystem {
	sub, err := fs.Sub(consoleFiles, "console")
	if err != nil {
		panic(err) // "console" is a literal directory of the embed above
	}
	return http.FS(sub)
}

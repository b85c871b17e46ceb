package console_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fundament-oss/ceph-rook/pluginruntime/console"
)

func TestFileSystem(t *testing.T) {
	tests := []struct {
		name    string
		fsys    fstest.MapFS
		dir     string
		wantErr string
	}{
		{
			name: "a folder with an html page is served",
			fsys: fstest.MapFS{"console/index.html": {Data: []byte("<h1>pools</h1>")}, "console/app.js": {Data: []byte("1")}},
			dir:  "console",
		},
		{
			name: "a page in a sub-folder counts",
			fsys: fstest.MapFS{"console/pages/list.html": {Data: []byte("<p>")}},
			dir:  "console",
		},
		{
			name: "the root of the file system",
			fsys: fstest.MapFS{"index.html": {Data: []byte("<p>")}},
			dir:  ".",
		},
		{
			name:    "a tree without html is refused",
			fsys:    fstest.MapFS{"console/app.js": {Data: []byte("1")}, "console/style.css": {Data: []byte("")}},
			dir:     "console",
			wantErr: `console assets "console": no .html file`,
		},
		{
			name:    "an empty tree is refused",
			fsys:    fstest.MapFS{},
			dir:     ".",
			wantErr: "no .html file",
		},
		{
			name:    "a missing folder is refused",
			fsys:    fstest.MapFS{"index.html": {Data: []byte("<p>")}},
			dir:     "console",
			wantErr: `console assets "console"`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hfs, err := console.FileSystem(tc.fsys, tc.dir)
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				assert.Nil(t, hfs)
				return
			}
			require.NoError(t, err)
			assert.NotNil(t, hfs)
		})
	}
}

func TestFileSystemServesTheFolderAtItsRoot(t *testing.T) {
	hfs, err := console.FileSystem(fstest.MapFS{
		"console/index.html":  {Data: []byte("<h1>pools</h1>")},
		"console/js/app.js":   {Data: []byte("console.log(1)")},
		"secret/password.txt": {Data: []byte("hunter2")},
	}, "console")
	require.NoError(t, err)
	srv := httptest.NewServer(http.FileServer(hfs))
	t.Cleanup(srv.Close)

	for path, want := range map[string]string{"/": "<h1>pools</h1>", "/js/app.js": "console.log(1)"} {
		res, err := http.Get(srv.URL + path)
		require.NoError(t, err)
		body, _ := io.ReadAll(res.Body)
		_ = res.Body.Close()
		assert.Equal(t, http.StatusOK, res.StatusCode, path)
		assert.Equal(t, want, string(body), path)
	}
	res, err := http.Get(srv.URL + "/../secret/password.txt")
	require.NoError(t, err)
	_ = res.Body.Close()
	assert.Equal(t, http.StatusNotFound, res.StatusCode, "files outside the folder are not reachable")
}

func TestMustFileSystemPanicsWithoutHTML(t *testing.T) {
	assert.Panics(t, func() { console.MustFileSystem(fstest.MapFS{"a.js": {}}, ".") })
}

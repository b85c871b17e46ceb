package main

import (
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fundament-oss/ceph-rook/pluginruntime/definition"
)

func parsedDefinition(t *testing.T) *definition.PluginDefinition {
	t.Helper()
	def, err := definition.ParseDefinition(definitionYAML)
	require.NoError(t, err, "definition.yaml must pass the runtime's strict parser")
	return def
}

// consoleSources reads every embedded console file by name.
func consoleSources(t *testing.T) map[string]string {
	t.Helper()
	sources := map[string]string{}
	require.NoError(t, fs.WalkDir(consoleFiles, "console", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := consoleFiles.ReadFile(path)
		sources[strings.TrimPrefix(path, "console/")] = string(data)
		return err
	}))
	return sources
}

func TestDefinitionIsValidAndUnpublished(t *testing.T) {
	def := parsedDefinition(t)
	assert.Equal(t, "ceph-rook", def.Metadata.Name)
	assert.Empty(t, def.Spec.Image, "the image is injected at publish time, never authored")
	menu := slices.Concat(def.Spec.Menu.Organization, def.Spec.Menu.Project)
	require.NotEmpty(t, menu)
	// The overview comes first: the list page of Rook's CephCluster kind,
	// the one menu entry that names a CRD the plugin does not own.
	assert.Equal(t, overviewCRD, menu[0].CRD, "the overview is the first page")
	assert.True(t, menu[0].List && !menu[0].Detail, "the overview is a list page only")
	assert.Equal(t, "overview.html", def.Spec.CustomComponents["CephCluster"].List)
	for _, entry := range menu[1:] {
		assert.Contains(t, def.Spec.CRDs, entry.CRD, "menu entry %s must name one of the plugin's CRDs", entry.CRD)
	}
	for _, crd := range def.Spec.CRDs {
		assert.Contains(t, def.Spec.UIHints, crd, "%s needs a status badge mapping", crd)
	}
}

// overviewCRD routes the overview page (definition.yaml's menu).
const overviewCRD = "cephclusters.ceph.rook.io"

func TestDefinitionConfigSchemaCoversEveryFUNPKey(t *testing.T) {
	def := parsedDefinition(t)
	var names []string
	for _, field := range def.Spec.ConfigSchema {
		names = append(names, "FUNP_"+field.Name)
	}
	for _, key := range ConfigKeys {
		assert.Contains(t, names, key)
	}
}

// Both directions: every file customComponents names is served, and every
// page in console/ has a route (a page not named there is unreachable).
func TestCustomComponentsAndConsolePagesMatch(t *testing.T) {
	def := parsedDefinition(t)
	sources := consoleSources(t)
	referenced := map[string]bool{}
	for kind, c := range def.Spec.CustomComponents {
		for view, file := range map[string]string{"list": c.List, "detail": c.Detail, "create": c.Create, "edit": c.Edit} {
			if file == "" {
				continue
			}
			referenced[file] = true
			assert.Contains(t, sources, file, "customComponents.%s.%s names a file console/ does not have", kind, view)
		}
		if c.Create != "" || c.Edit != "" {
			assert.Equal(t, "sheet.html", firstNonEmpty(c.Create, c.Edit), "%s: every create and edit is the shared sheet", kind)
		}
	}
	for name := range sources {
		if strings.HasSuffix(name, ".html") {
			assert.True(t, referenced[name], "console/%s is not named in customComponents, so the console has no route to it", name)
		}
	}
}

func firstNonEmpty(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// Every script a page loads and every module a script imports exists.
func TestConsoleScriptsAndImportsResolve(t *testing.T) {
	sources := consoleSources(t)
	scriptSrc := regexp.MustCompile(`<script[^>]*\bsrc="([^"]+)"`)
	importFrom := regexp.MustCompile(`(?m)^import [^;]*? from '([^']+)';|^import '([^']+)';`)
	for name, src := range sources {
		var refs []string
		for _, m := range scriptSrc.FindAllStringSubmatch(src, -1) {
			refs = append(refs, m[1])
		}
		for _, m := range importFrom.FindAllStringSubmatch(src, -1) {
			refs = append(refs, firstNonEmpty(m[1], m[2]))
		}
		for _, ref := range refs {
			if strings.HasPrefix(ref, "/plugins/sdk/v1/") {
				assert.Equal(t, "/plugins/sdk/v1/plugin-sdk.js", ref, "%s: the only host script is the SDK", name)
				continue
			}
			assert.Contains(t, sources, strings.TrimPrefix(ref, "./"), "%s loads %s", name, ref)
		}
	}
}

var (
	// resourceEntry reads one entry of RESOURCES in _shared.js.
	resourceEntry = regexp.MustCompile(`(?m)^\s+(\w+): \{ group: '([^']*)', version: '([^']*)', resource: '([^']*)' \},$`)
	// anyK8sCall and k8sCall find the SDK's Kubernetes calls; every call must
	// name a RESOURCES entry directly so the verbs can be read off the source.
	anyK8sCall = regexp.MustCompile(`\bk8s\.\w+\(`)
	k8sCall    = regexp.MustCompile(`\bk8s\.(\w+)\(\s*(?:\{\s*\.\.\.)?RESOURCES\.(\w+)`)
)

// The verbs the pages call equal the verbs allowedResources lists: nothing
// the platform would refuse, and nothing granted that no page uses.
func TestConsoleVerbsEqualAllowedResources(t *testing.T) {
	def := parsedDefinition(t)
	sources := consoleSources(t)

	resources := map[string]string{}
	for _, m := range resourceEntry.FindAllStringSubmatch(sources["_shared.js"], -1) {
		resources[m[1]] = m[2] + "/" + m[3] + "/" + m[4]
	}
	require.NotEmpty(t, resources, "RESOURCES in _shared.js could not be read")

	used := map[string]bool{}
	for name, src := range sources {
		require.Equal(t, len(anyK8sCall.FindAllString(src, -1)), len(k8sCall.FindAllString(src, -1)),
			"console/%s calls fundament.k8s without naming a RESOURCES entry; the verb check cannot see it", name)
		for _, m := range k8sCall.FindAllStringSubmatch(src, -1) {
			resource, ok := resources[m[2]]
			require.True(t, ok, "console/%s uses RESOURCES.%s, which _shared.js does not define", name, m[2])
			used[resource+" "+m[1]] = true
		}
	}

	allowed := map[string]bool{}
	for _, a := range def.Spec.AllowedResources {
		for _, verb := range a.Verbs {
			allowed[a.Group+"/"+a.Version+"/"+a.Resource+" "+verb] = true
		}
		if a.Resource == "diskretirements" {
			continue // a suspended retirement's preview is deleted by its sheet's Cancel: it touched nothing
		}
		assert.NotContains(t, a.Verbs, "delete", "%s: deletion is a kubectl delete, never the console", a.Resource)
	}
	assert.Equal(t, sortedKeys(allowed), sortedKeys(used), "allowedResources (left) must list exactly the verbs the pages use (right)")
}

// fetchCall finds a call of fetch in any form: the SDK's (fundament.fetch(,
// sdk().fetch(), the browser's (fetch(, window.fetch(, globalThis.fetch()
// or any other object's, and fetch taken to call later (.fetch without a
// call, ['fetch']).
var fetchCall = regexp.MustCompile(`\bfetch\s*\(|\.\s*fetch\b|\[\s*['"\x60]fetch['"\x60]\s*\]`)

// fetchModule is the one console module that calls fetch: live.js reads
// lists in pages and watches, which the SDK's k8s cannot, and only through
// the SDK's fetch (which adds the token); every other module makes its
// Kubernetes calls through fundament.k8s or live.js, so the verbs the
// pages use can be read off their source.
const fetchModule = "live.js"

// Only live.js calls fetch, and only the SDK's.
func TestOnlyLiveJSCallsFetch(t *testing.T) {
	sources := consoleSources(t)
	require.Contains(t, sources, fetchModule)
	for name, src := range sources {
		found := fetchCall.FindAllString(src, -1)
		if name != fetchModule {
			assert.Empty(t, found, "console/%s calls fetch: only %s may, every other module reads through fundament.k8s or %s", name, fetchModule, fetchModule)
			continue
		}
		assert.NotEmpty(t, found, "%s reads the kube-api-proxy through the SDK's fetch", fetchModule)
		assert.Equal(t, len(found), strings.Count(src, "sdk().fetch("), "%s calls fetch only as sdk().fetch( (the SDK adds the token): %q", fetchModule, found)
	}
}

// The pages run under script-src 'self'; style-src 'self' and show API
// values as text: no inline code or styles, no HTML strings.
func TestConsolePagesKeepToTheCSPAndEscape(t *testing.T) {
	forbidden := []struct {
		ext     string // ".html", ".js" or "" for both
		pattern *regexp.Regexp
		why     string
	}{
		{".html", regexp.MustCompile(`<script>|<script(\s[^>]*)?>[^<\s]`), "inline <script> is blocked by the CSP"},
		{".html", regexp.MustCompile(`(?i)\son[a-z]+\s*=`), "on*= handler attributes are blocked by the CSP"},
		{".html", regexp.MustCompile(`(?i)\sstyle\s*=`), "style= attributes are blocked by the CSP"},
		{"", regexp.MustCompile(`(?i)<style`), "<style> blocks are blocked by the CSP"},
		{".js", regexp.MustCompile(`setAttribute\(\s*'(on[a-z]+|style)'|attrs: \{[^}]*\b(on[a-z]+|style):`), "handler and style attributes are blocked by the CSP"},
		{".js", regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|createContextualFragment|DOMParser`), "HTML strings would render API values as markup"},
		{".js", regexp.MustCompile(`postMessage\([^)]*'\*'`), "messages go to fundament.parentOrigin, never '*'"},
		{".js", regexp.MustCompile(`\beval\(|new Function\(`), "no code from strings"},
		{"", regexp.MustCompile(`https?://`), "pages load nothing from other hosts"},
	}
	for name, src := range consoleSources(t) {
		for _, f := range forbidden {
			if f.ext != "" && !strings.HasSuffix(name, f.ext) {
				continue
			}
			assert.Falsef(t, f.pattern.MatchString(src), "console/%s: %s (found %q)", name, f.why, f.pattern.FindString(src))
		}
	}
}

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/fundament-oss/ceph-rook/internal/testenv"
)

// publishedDefinition is definition.yaml as the registry publishes it: the
// digest-pinned image injected, pulled never (nothing can be pulled here).
func publishedDefinition(path, imageRef string) ([]byte, error) {
	source, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	const spec = "\nspec:\n"
	if !strings.Contains(string(source), spec) {
		return nil, fmt.Errorf("%s: no top-level spec", path)
	}
	injected := spec + "  image: " + imageRef + "\n  imagePullPolicy: Never\n"
	return []byte(strings.Replace(string(source), spec, injected, 1)), nil
}

// pluginConfig is the installation's configuration for this machine: loop
// devices, a Ceph image built here (Debian's Ceph 18.2.7, under its name
// or, from the upgrade phase on, a second tag), and on one node a single
// mon and mgr (on three, the product's defaults: three mons and two mgrs,
// each on its own node). Metrics are off because Debian packages no
// ceph-exporter: with them on, Rook's exporter pod cannot start
// ("ceph-exporter": executable file not found).
func pluginConfig(nodes int, cephImage string) map[string]string {
	config := map[string]string{
		"CEPH_IMAGE":       cephImage,
		"DEV_LOOP_DEVICES": "true",
		"METRICS":          "false",
	}
	if nodes < 3 {
		config["MON_COUNT"], config["MGR_COUNT"], config["ALLOW_MULTIPLE_PER_NODE"] = "1", "1", "true"
	}
	return config
}

// chartSource is where the plugin finds the Rook chart it installs, and
// the digest it pins.
type chartSource struct{ URL, Digest string }

// platformManifests are the platform's side: the PluginInstallation CRD,
// the plugin controller (definitions from a ConfigMap laid out as the
// registry) and the installation of ceph-rook with pluginConfig.
func platformManifests(definition []byte, version, hash string, chart chartSource, pluginConfig map[string]string) (string, error) {
	crd, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "internal", "plugincontroller", "crds", "plugins.fundament.io_plugininstallations.yaml"))
	if err != nil {
		return "", err
	}
	config := map[string]string{"CHART_REPOSITORY": chart.URL, "DEV_INSECURE_CHART_REPOSITORY": "true", "CHART_DIGEST": chart.Digest}
	for k, v := range pluginConfig {
		config[k] = v
	}
	objects := []any{
		map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": platformNS}},
		map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{"name": "plugin-controller", "namespace": platformNS}},
		// The controller grants what definitions declare (escalate, bind):
		// in this test cluster it simply holds cluster-admin.
		map[string]any{
			"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
			"metadata": map[string]any{"name": "e2e:plugin-controller"},
			"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
			"subjects": []any{map[string]any{"kind": "ServiceAccount", "name": "plugin-controller", "namespace": platformNS}},
		},
		map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "plugin-definitions", "namespace": platformNS},
			"data":     map[string]any{"ceph-rook.yaml": string(definition)},
		},
		controllerDeployment(version),
		map[string]any{
			"apiVersion": "plugins.fundament.io/v1", "kind": "PluginInstallation",
			"metadata": map[string]any{"name": installationName},
			"spec": map[string]any{
				"definitionRef": map[string]any{"organizationName": organization, "pluginName": "ceph-rook", "pluginVersion": version, "definitionHash": hash},
				"config":        config,
			},
		},
	}
	docs := []string{string(crd)}
	for _, o := range objects {
		data, err := yaml.Marshal(o)
		if err != nil {
			return "", err
		}
		docs = append(docs, string(data))
	}
	return strings.Join(docs, "\n---\n"), nil
}

func controllerDeployment(version string) map[string]any {
	labels := map[string]any{"app": "plugin-controller"}
	return map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "plugin-controller", "namespace": platformNS},
		"spec": map[string]any{
			"replicas": 1,
			"selector": map[string]any{"matchLabels": labels},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{
					"serviceAccountName": "plugin-controller",
					"securityContext": map[string]any{
						"runAsNonRoot": true, "runAsUser": 65532, "runAsGroup": 65532,
						"seccompProfile": map[string]any{"type": "RuntimeDefault"},
					},
					"containers": []any{map[string]any{
						"name": "plugin-controller", "image": controllerImage, "imagePullPolicy": "Never",
						"args": []any{"--definitions-dir=/definitions", "--cluster-id=e2e-cluster", "--organization-id=e2e-org", "--poll-interval=5s"},
						"securityContext": map[string]any{
							"allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true,
							"capabilities": map[string]any{"drop": []any{"ALL"}},
						},
						"volumeMounts": []any{map[string]any{"name": "definitions", "mountPath": "/definitions"}},
					}},
					"volumes": []any{map[string]any{"name": "definitions", "configMap": map[string]any{
						"name":  "plugin-definitions",
						"items": []any{map[string]any{"key": "ceph-rook.yaml", "path": organization + "/ceph-rook/" + version + "/definition.yaml"}},
					}}},
				},
			},
		},
	}
}

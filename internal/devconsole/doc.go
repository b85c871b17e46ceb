// Package devconsole is a development stand-in for the Fundament console:
// it shows a plugin's console pages the way the platform does, so they can
// be used locally and tested in a real browser without the platform.
//
// It listens twice, because production serves the console and the plugin's
// pages from different origins and the pages' CSP depends on it:
//
//   - the console origin serves the host page (the menu from
//     definition.yaml, list and detail routes, sheets, the fundament:* /
//     plugin:* message protocol) and the kube-api-proxy, which checks the
//     page's bearer token and the plugin's allowedResources before
//     forwarding to the API server;
//   - the plugin origin serves the plugin's console files under the
//     plugin-proxy path and /plugins/sdk/v1/plugin-sdk.{js,css}, every
//     response under the production CSP.
//
// Start it with the plugin's definition and console files:
//
//	srv, err := devconsole.Start(ctx, devconsole.Options{
//		Definition: definitionYAML,
//		Console:    http.Dir("console"),
//		RESTConfig: restConfig,
//	})
//	...
//	fmt.Println("open", srv.URL())
package devconsole

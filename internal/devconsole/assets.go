package devconsole

import "embed"

// assets are the host page (host/) and the SDK pages load (sdk/).
//
//go:embed assets/host assets/sdk
var assets embed.FS

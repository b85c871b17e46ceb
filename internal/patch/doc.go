// Package patch is "write only what changed", in one home, the role
// Cluster API's util/patch plays there:
//
//   - Status (status.go): a merge patch that sets a whole status, zero
//     values as null, numbers exactly as written.
//   - IfChanged and Merge (object.go): a merge patch from a base, sent only
//     when it changes something; a merge patch built as JSON, never by
//     splicing strings into a template.
//   - Memory (memory.go): the one memory of the plugin's own writes, for
//     the window in which the cache lags behind them.
package patch

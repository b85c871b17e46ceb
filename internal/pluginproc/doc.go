// Package pluginproc builds the plugin binary (and its helm helper) from
// the repository and runs it as a process, as the platform would run its
// container: `just run` and the benchmark use it, so both exercise the
// real binary the same way.
package pluginproc

// Package browser drives the console in a real headless Chromium (Debian's
// chromium package) through the DevTools protocol: the development
// console's browser tests and the real cluster's console step (just e2e)
// use the same driver.
//
// Every step fails through T, the part of testing.TB it needs, so a test
// passes its *testing.T and a program passes anything that stops the
// calling goroutine on FailNow, as testing does.
package browser

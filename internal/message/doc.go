// Package message is the prose the plugin writes for people, bounded for
// the API: every status and condition message goes through Bound, because
// an over-long one makes the API server refuse the whole status write.
// Clauses names per-disk clauses up to a budget and counts the rest;
// Bytes, Plural, Join and OrNone are the small words of those sentences.
package message

// Command ceph-rook is the Fundament plugin that gives a cluster block,
// shared file and S3 object storage by installing and driving Rook-Ceph.
package main

func main() {}

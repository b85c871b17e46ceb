package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/fundament-oss/ceph-rook/internal/e2e/pki"
)

type clients []pki.Client

func (c *clients) String() string { return fmt.Sprint(*c) }

func (c *clients) Set(v string) error {
	file, rest, ok := strings.Cut(v, "=")
	if !ok || file == "" || rest == "" {
		return fmt.Errorf("%q is not FILE=USER[/GROUP,...]", v)
	}
	user, groups, _ := strings.Cut(rest, "/")
	client := pki.Client{File: file, User: user}
	if groups != "" {
		client.Groups = strings.Split(groups, ",")
	}
	*c = append(*c, client)
	return nil
}

func main() {
	dir := flag.String("dir", "", "folder to write (must not hold a CA yet)")
	ips := flag.String("ip", "", "comma-separated serving IPs")
	names := flag.String("name", "", "comma-separated serving DNS names")
	var cs clients
	flag.Var(&cs, "client", "a client certificate, FILE=USER[/GROUP,...] (repeatable)")
	flag.Parse()
	plan := pki.Plan{Clients: cs}
	for _, s := range strings.Split(*ips, ",") {
		if s == "" {
			continue
		}
		ip := net.ParseIP(s)
		if ip == nil {
			fmt.Fprintf(os.Stderr, "pki: %q is not an IP\n", s)
			os.Exit(2)
		}
		plan.ServingIPs = append(plan.ServingIPs, ip)
	}
	if *names != "" {
		plan.ServingNames = strings.Split(*names, ",")
	}
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "pki: -dir is required")
		os.Exit(2)
	}
	if err := pki.Write(*dir, plan); err != nil {
		fmt.Fprintln(os.Stderr, "pki:", err)
		os.Exit(1)
	}
}

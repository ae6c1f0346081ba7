// proxy_trap - an HTTP proxy on loopback that answers 502 Bad Gateway (with an HTML body, as real
// proxies do) to everything and counts requests, including CONNECT. The integration tests point
// http_proxy/HTTP_PROXY/HTTPS_PROXY/ALL_PROXY at it and then assert the count stayed zero: sunny
// must never send loopback traffic through a proxy.
//   proxy_trap -port-file F -count-file C
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync/atomic"
)

func main() {
	portFile := flag.String("port-file", "", "write the port here")
	countFile := flag.String("count-file", "", "rewrite the request count here after each request")
	flag.Parse()
	var n int64
	write := func() {
		if *countFile != "" {
			os.WriteFile(*countFile, []byte(strconv.FormatInt(atomic.LoadInt64(&n), 10)), 0o644)
		}
	}
	write()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		atomic.AddInt64(&n, 1)
		write()
		fmt.Fprintf(os.Stderr, "proxy_trap: %s %s\n", r.Method, r.URL)
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		fmt.Fprint(w, "<html><body><h1>502 Bad Gateway</h1>proxy_trap</body></html>")
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if *portFile != "" {
		os.WriteFile(*portFile+".tmp", []byte(strconv.Itoa(port)), 0o644)
		os.Rename(*portFile+".tmp", *portFile)
	}
	http.Serve(ln, h)
}

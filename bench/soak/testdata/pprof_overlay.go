package main

import (
	"net/http"
	_ "net/http/pprof"
	"os"
)

// Soak only (go build -overlay): pprof on $SOAK_PPROF.
func init() {
	if a := os.Getenv("SOAK_PPROF"); a != "" {
		go http.ListenAndServe(a, nil)
	}
}

package main

import (
	"fmt"
	"os"
	"syscall"
	"time"
)

// processCPU is the process's user and kernel time so far.
func processCPU() (time.Duration, error) {
	var creation, exit, kernel, user syscall.Filetime
	h, err := syscall.GetCurrentProcess()
	if err == nil {
		err = syscall.GetProcessTimes(h, &creation, &exit, &kernel, &user)
	}
	if err != nil {
		return 0, fmt.Errorf("GetProcessTimes: %w", err)
	}
	return filetimeSpan(kernel) + filetimeSpan(user), nil
}

// filetimeSpan reads a FILETIME that holds a span, in units of 100 ns.
func filetimeSpan(ft syscall.Filetime) time.Duration {
	return time.Duration(int64(ft.HighDateTime)<<32|int64(ft.LowDateTime)) * 100
}

// peakRSS is 0: a Windows process's peak working set is not in its
// ProcessState, so the bench reports no peak memory there.
func peakRSS(*os.ProcessState) int64 { return 0 }

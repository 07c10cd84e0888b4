//go:build !linux

package cpugate

// Bulk priority needs per-thread nice values (Linux): elsewhere bulk
// goroutines keep the process's priority.

func lower() {}
func raise() {}

package bench

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// CPUSample is a reading of the machine's busy CPU time and of the CPU time
// of the processes under measurement, to tell how much of the machine
// other processes took during a measurement (the load average counts the
// measured processes too).
type CPUSample struct {
	at      time.Time
	busy    uint64 // jiffies, all CPUs
	ours    uint64 // jiffies of the processes
	hz      float64
	pids    []int
	invalid bool
}

// clockTicks is USER_HZ, which Linux fixes at 100 for /proc.
const clockTicks = 100

// SampleCPU reads /proc for the processes pids (0 means this process).
func SampleCPU(pids ...int) CPUSample {
	s := CPUSample{at: time.Now(), hz: clockTicks, pids: pids}
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		s.invalid = true
		return s
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		s.invalid = true
		return s
	}
	for i, x := range f[1:9] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		v, _ := strconv.ParseUint(x, 10, 64)
		s.busy += v
	}
	for _, pid := range pids {
		path := "/proc/self/stat"
		if pid != 0 {
			path = fmt.Sprintf("/proc/%d/stat", pid)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			s.invalid = true
			continue
		}
		// Fields after the command name (which may hold spaces) start at
		// state; utime, stime, cutime, cstime are fields 14–17 (1-based).
		rest := string(b)
		if i := strings.LastIndexByte(rest, ')'); i >= 0 {
			rest = rest[i+1:]
		}
		g := strings.Fields(rest)
		if len(g) < 15 {
			s.invalid = true
			continue
		}
		for _, x := range g[11:15] {
			v, _ := strconv.ParseInt(x, 10, 64)
			if v > 0 {
				s.ours += uint64(v)
			}
		}
	}
	return s
}

// OtherCores returns the average number of cores that processes other than
// the sampled ones kept busy between s and a later sample e (-1 when
// unknown).
func (s CPUSample) OtherCores(e CPUSample) float64 {
	if s.invalid || e.invalid || !e.at.After(s.at) {
		return -1
	}
	secs := e.at.Sub(s.at).Seconds()
	busy := float64(e.busy) - float64(s.busy)
	ours := float64(e.ours) - float64(s.ours)
	other := (busy - ours) / s.hz / secs
	return max(other, 0)
}

// CPUSeconds returns the CPU time (user and system) the sampled processes
// used between s and a later sample e of the same processes (-1 when
// unknown). /proc counts it in clock ticks of 10 ms.
func (s CPUSample) CPUSeconds(e CPUSample) float64 {
	if s.invalid || e.invalid || e.ours < s.ours {
		return -1
	}
	return float64(e.ours-s.ours) / s.hz
}

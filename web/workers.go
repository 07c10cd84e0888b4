package web

import "time"

// workerPool runs functions on goroutines that stay alive for a while
// after their work: Backend.Query runs on one so that the stack the engine
// grew is reused by the next query instead of being grown (copied) again
// in every new goroutine — about 6 % of the CPU of a small query over
// HTTP (BenchmarkHTTPQueries in service/).
type workerPool struct {
	jobs chan func()
	idle time.Duration
}

func newWorkerPool(idle time.Duration) *workerPool {
	return &workerPool{jobs: make(chan func()), idle: idle}
}

// run starts f on an idle worker, or on a new one when none is idle; it
// does not wait for f.
func (p *workerPool) run(f func()) {
	select {
	case p.jobs <- f:
	default:
		go p.work(f)
	}
}

func (p *workerPool) work(f func()) {
	f()
	t := time.NewTimer(p.idle)
	defer t.Stop()
	for {
		select {
		case f := <-p.jobs:
			f()
			t.Reset(p.idle)
		case <-t.C:
			return
		}
	}
}

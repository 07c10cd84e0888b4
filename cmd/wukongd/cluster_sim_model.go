package main

import (
	"fmt"
	"io"
	"time"

	"github.com/wukongd/wukongd/datasets"
)

// mixModel is what the model makes of one mixResult (DESIGN.md
// §"cluster-sim"): figures for nodes of cfg.cores cores each, the network
// model and the modelled fsync, from the CPU each simulated node spent
// per operation.
type mixModel struct {
	leader int
	// Capacity: operations/s the busiest node allows (its cores less its
	// background, over its CPU per operation), or its NIC if lower.
	opsPerSec, readsPerSec, writesPerSec float64
	bottleneck                           string
	// A read at light load: CPU of all its nodes plus the network
	// model's time charged to its coordinator.
	readCPU, readNet time.Duration
	// A write at light load (the critical path, averaged over the node it
	// comes to): eval on that node, the log (the network's one-way
	// messages, one fsync, the leader's and a follower's Raft CPU), then
	// the apply on that node.
	eval, logNet, logFsync, logCPU, apply, commit time.Duration
	leaderLog, followerLog                        time.Duration
	cpuPerWrite                                   time.Duration // every node's CPU for one write
	leaderRaftBytes, leaderRaftMsgs               float64       // per write, to all followers
	background                                    float64       // the busiest node's background, cores
	unattributedShare                             float64
	otherShare                                    float64 // labelled, in no part
}

func modelMix(cfg mixConfig, r mixResult) mixModel {
	var m mixModel
	n := r.nodes
	var labelled time.Duration
	for i := range r.cpu {
		for p := 0; p < numParts; p++ {
			labelled += r.cpu[i][p]
		}
	}
	// Samples without a label (GC's workers, the runtime) are shared out
	// in proportion to what each node spent.
	u := 1.0
	if labelled > 0 {
		u = 1 + float64(r.unattributed)/float64(labelled)
		m.unattributedShare = float64(r.unattributed) / float64(labelled+r.unattributed)
	}
	var other time.Duration
	for i := range r.cpu {
		other += r.cpu[i][partOther]
	}
	if labelled > 0 {
		m.otherShare = float64(other) / float64(labelled)
	}
	scaled := func(d time.Duration) time.Duration { return time.Duration(float64(d) * u) }
	ops := float64(r.reads + r.writes)
	m.leader = r.leader
	if m.leader < 0 || m.leader >= n || r.termChanged {
		for i := range r.cpu { // the node that spent most on the log
			if m.leader < 0 || m.leader >= n || r.cpu[i][partLog] > r.cpu[m.leader][partLog] {
				m.leader = i
			}
		}
	}
	m.opsPerSec = -1
	for i := 0; i < n; i++ {
		var work time.Duration
		for _, p := range []int{partRead, partEval, partLog, partApply, partOther} {
			work += scaled(r.cpu[i][p])
		}
		bg := r.cpu[i][partBg].Seconds() / r.wall.Seconds()
		if work <= 0 || ops == 0 {
			continue
		}
		x := (cfg.cores - bg) / (work.Seconds() / ops)
		if m.opsPerSec < 0 || x < m.opsPerSec {
			m.opsPerSec, m.bottleneck, m.background = x, fmt.Sprintf("CPU of node %d", i), bg
			if i == m.leader {
				m.bottleneck = fmt.Sprintf("CPU of node %d (leader)", i)
			}
		}
		t := r.traffic[i]
		if b := float64(t.RaftBytes+t.QueryMsgBytes+t.ReadBytes) / ops; cfg.model.Bandwidth > 0 && b > 0 {
			if x := cfg.model.Bandwidth / b; x < m.opsPerSec {
				m.opsPerSec, m.bottleneck = x, fmt.Sprintf("bandwidth of node %d", i)
			}
		}
	}
	if ops > 0 {
		m.readsPerSec = m.opsPerSec * float64(r.reads) / ops
		m.writesPerSec = m.opsPerSec * float64(r.writes) / ops
	}
	if r.reads > 0 {
		var cpu time.Duration
		for i := range r.cpu {
			cpu += scaled(r.cpu[i][partRead])
		}
		m.readCPU = cpu / time.Duration(r.reads)
		m.readNet = r.readNet / time.Duration(r.reads)
	}
	if r.writes == 0 {
		return m
	}
	w := time.Duration(r.writes)
	var eval, logOthers, apply time.Duration
	for i := range r.cpu {
		eval += scaled(r.cpu[i][partEval])
		apply += scaled(r.cpu[i][partApply])
		if i != m.leader {
			logOthers += scaled(r.cpu[i][partLog])
		}
	}
	m.eval = eval / w
	m.leaderLog = scaled(r.cpu[m.leader][partLog]) / w
	if n > 1 {
		m.followerLog = logOthers / time.Duration(n-1) / w
	}
	m.apply = apply / time.Duration(n) / w
	m.cpuPerWrite = (eval + logOthers + scaled(r.cpu[m.leader][partLog]) + apply) / w
	lt := r.traffic[m.leader]
	m.leaderRaftBytes = float64(lt.RaftBytes) / float64(r.writes)
	m.leaderRaftMsgs = float64(lt.RaftMessages) / float64(r.writes)
	// One one-way message: the latency and a write's share of the bytes
	// to one follower.
	one := cfg.model.MessageLatency
	if cfg.model.Bandwidth > 0 && n > 1 {
		one += time.Duration(m.leaderRaftBytes / float64(n-1) / cfg.model.Bandwidth * 1e9)
	}
	// The leader appends (its fsync overlaps the replication) and sends
	// the entry; a follower appends, syncs and answers; the leader
	// commits once a majority answered. A write that came to a follower
	// (n-1 of n) is forwarded to the leader first and learns of the
	// commit from the leader's next append.
	fwd := time.Duration(float64(2*one) * float64(n-1) / float64(n))
	m.logNet = 2*one + fwd
	m.logFsync = cfg.fsync
	m.logCPU = m.leaderLog + m.followerLog
	m.commit = m.eval + m.logNet + m.logFsync + m.logCPU + m.apply
	return m
}

func usf(d time.Duration) string { return fmt.Sprintf("%.0f", float64(d)/1e3) }

func printMix(w io.Writer, cfg mixConfig, rs []mixResult) {
	fmt.Fprintf(w, "LUBM-%d, one shard per node, %d replicas, one Raft group of all nodes; %d closed-loop clients, %.0f%% writes (single-triple INSERT DATA), reads %s;\n",
		cfg.univ, cfg.replicas, cfg.clients, cfg.writes*100, queryLabels(cfg.queries))
	fmt.Fprintf(w, "model: %g cores per node, READ round trip %v, message %v, %.1f GB/s, fsync %v per log append (modelled; the logs are on a tmpfs).\n\n",
		cfg.cores, cfg.model.RoundTrip, cfg.model.MessageLatency, cfg.model.Bandwidth/1e9, cfg.fsync)
	fmt.Fprintln(w, "Simulated (model over the measured per-node CPU):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| nodes | read q/s | write updates/s | bottleneck | read latency ms | commit latency ms | of which the log: network / fsync / Raft CPU ms | log share | eval / apply ms |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	models := make([]mixModel, len(rs))
	for i, r := range rs {
		m := modelMix(cfg, r)
		models[i] = m
		logAll := m.logNet + m.logFsync + m.logCPU
		share := 0.0
		if m.commit > 0 {
			share = float64(logAll) / float64(m.commit)
		}
		fmt.Fprintf(w, "| %d | %.0f | %.0f | %s | %s | %s | %s / %s / %s | %.0f%% | %s / %s |\n", r.nodes, m.readsPerSec, m.writesPerSec, m.bottleneck,
			ms(m.readCPU+m.readNet), ms(m.commit), ms(m.logNet), ms(m.logFsync), ms(m.logCPU), share*100, ms(m.eval), ms(m.apply))
	}
	fmt.Fprintln(w, "\nMeasured CPU per operation (process CPU profile, by node label and stack; µs), and the leader's Raft traffic:")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| nodes | reads | writes | read CPU (all nodes) | read net (model) | round trips/read | write CPU, all nodes | leader log | follower log (mean) | apply per node | leader Raft msgs/write | leader Raft KB/write | busiest node's background, cores | unlabelled CPU | labelled, no part |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for i, r := range rs {
		m := models[i]
		rt := 0.0
		if r.reads > 0 {
			rt = float64(r.readRoundTrips) / float64(r.reads)
		}
		fmt.Fprintf(w, "| %d | %d | %d | %s | %s | %.1f | %s | %s | %s | %s | %.1f | %.2f | %.3f | %.0f%% | %.0f%% |\n", r.nodes, r.reads, r.writes,
			usf(m.readCPU), usf(m.readNet), rt, usf(m.cpuPerWrite), usf(m.leaderLog), usf(m.followerLog), usf(m.apply),
			m.leaderRaftMsgs, m.leaderRaftBytes/1024, m.background, m.unattributedShare*100, m.otherShare*100)
	}
	fmt.Fprintln(w, "\nMeasured on this machine (all the nodes share its cores: not a cluster's speed):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| nodes | wall s | reads/s | writes/s | read p50 ms | write p50 ms | leader | term changed | load |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	for i, r := range rs {
		p50 := func(ds []time.Duration) string {
			if len(ds) == 0 {
				return "-"
			}
			return ms(median(ds))
		}
		fmt.Fprintf(w, "| %d | %.1f | %.0f | %.0f | %s | %s | %d | %v | %s |\n", r.nodes, r.wall.Seconds(),
			float64(r.reads)/r.wall.Seconds(), float64(r.writes)/r.wall.Seconds(), p50(r.readWall), p50(r.writeWall), models[i].leader, r.termChanged, r.load)
	}
}

func queryLabels(qs []datasets.Query) string {
	s := ""
	for i, q := range qs {
		if i > 0 {
			s += ","
		}
		s += q.Label
	}
	return s
}

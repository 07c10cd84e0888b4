package exec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/wukongd/wukongd/planner"
)

// Fork-join messages. Every message is bytes (little-endian), so any
// Transport can carry it:
//
//	sub-query: kind=1 | fork uvarint | deadline int64 (unix ns, 0 none) |
//	           flags u8 (1: analyze) | start uvarint | limit uvarint
//	           (rows wanted, 0: all) | memory uvarint (the query's
//	           budget in bytes, 0: none) | steps | table | filters |
//	           reduce (kind u8: 0 none, and nothing follows; 1 semi-join:
//	           col uvarint; 2 distinct: n uvarint, cols uvarint; 3
//	           top-k: k uvarint, n uvarint, n × (col uvarint, desc u8);
//	           then clashes: n uvarint, pairs of uvarint)
//	reply:     kind=2 | fork uvarint | status u8 (0 ok, 1 error, 2 the
//	           memory budget, 3 a value too large) | error string |
//	           table | stats
//	cancel:    kind=3 | fork uvarint
//
// steps:  n uvarint, then per step: kind u8, pattern varint, from operand,
//
//	pred operand, predNew u8, dir u8, to operand, toNew u8, mode u8,
//	partitioned varint, estRows float64 bits
//
// operand: kind u8, then id uvarint (const) or col uvarint (var)
// table:   ncols uvarint, nrows uvarint, then per column a flag u8
//
//	(0: all unbound, 1: nrows × uint64)
//
// stats:   n uvarint, then per step 9 uvarints (StepStats fields)
// filters: n uvarint (0: none, and nothing follows), then per filter
//
//	after varint, expression string (SPARQL text); then the variables
//	of the columns the expressions read: n uvarint, names as strings;
//	NOW() int64 (unix ns), base IRI string
//
// string:  length uvarint, bytes
const (
	msgSubQuery byte = 1
	msgReply    byte = 2
	msgCancel   byte = 3
)

var errShort = errors.New("truncated message")

type subQuery struct {
	fork     uint64
	deadline time.Time
	analyze  bool
	start    int
	limit    int         // rows wanted (0: all; task.limit)
	reduce   *reduceSpec // nil: none (task.reduce)
	memory   int64       // the query's memory budget (0: none)
	steps    []planner.Step
	table    *Table
	filters  *wireFilters // nil: none
}

// wireFilters are the FILTERs pushed into an exploration as a forked
// child receives them: SPARQL text, compiled by the child.
type wireFilters struct {
	after []int
	exprs []string
	vars  []string
	now   time.Time
	base  string
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func (d *decoder) string() string {
	n := d.count(1)
	if d.err != nil || n > len(d.b) {
		d.err = errShort
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func appendFilters(b []byte, f *wireFilters) []byte {
	if f == nil || len(f.exprs) == 0 {
		return binary.AppendUvarint(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(f.exprs)))
	for i, e := range f.exprs {
		b = binary.AppendVarint(b, int64(f.after[i]))
		b = appendString(b, e)
	}
	b = binary.AppendUvarint(b, uint64(len(f.vars)))
	for _, v := range f.vars {
		b = appendString(b, v)
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(f.now.UnixNano()))
	return appendString(b, f.base)
}

func (d *decoder) filters() *wireFilters {
	n := d.count(2)
	if n == 0 || d.err != nil {
		return nil
	}
	f := &wireFilters{after: make([]int, n), exprs: make([]string, n)}
	for i := 0; i < n; i++ {
		f.after[i] = int(d.varint())
		f.exprs[i] = d.string()
	}
	nv := d.count(1)
	f.vars = make([]string, nv)
	for i := range f.vars {
		f.vars[i] = d.string()
	}
	f.now = time.Unix(0, int64(d.u64()))
	f.base = d.string()
	return f
}

type reply struct {
	fork  uint64
	kind  byte // of the error: 1 any, 2 the memory budget, 3 a value too large
	err   string
	table *Table
	stats []StepStats
}

func appendOperand(b []byte, o planner.Operand) []byte {
	b = append(b, byte(o.Kind))
	switch o.Kind {
	case planner.OpConst:
		b = binary.AppendUvarint(b, uint64(o.ID))
	case planner.OpVar:
		b = binary.AppendUvarint(b, uint64(o.Col))
	}
	return b
}

func appendSteps(b []byte, steps []planner.Step) []byte {
	b = binary.AppendUvarint(b, uint64(len(steps)))
	for i := range steps {
		s := &steps[i]
		b = append(b, byte(s.Kind))
		b = binary.AppendVarint(b, int64(s.Pattern))
		b = appendOperand(b, s.From)
		b = appendOperand(b, s.Pred)
		b = append(b, boolByte(s.PredNew), byte(s.Dir))
		b = appendOperand(b, s.To)
		b = append(b, boolByte(s.ToNew), byte(s.Mode))
		b = binary.AppendVarint(b, int64(s.Partitioned))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(s.EstRows))
		b = binary.AppendUvarint(b, uint64(s.TypeCheck))
		b = binary.AppendVarint(b, int64(s.CheckPattern))
		b = append(b, boolByte(s.Intersect))
		if s.Intersect {
			b = binary.AppendUvarint(b, uint64(s.IntersectCol))
			b = binary.AppendUvarint(b, uint64(s.IntersectPred))
			b = append(b, byte(s.IntersectDir))
			b = binary.AppendVarint(b, int64(s.IntersectPattern))
		}
	}
	return b
}

func appendTable(b []byte, t *Table) []byte {
	b = binary.AppendUvarint(b, uint64(len(t.Cols)))
	b = binary.AppendUvarint(b, uint64(t.N))
	for _, col := range t.Cols {
		if col == nil {
			b = append(b, 0)
			continue
		}
		b = append(b, 1)
		for _, v := range col[:t.N] {
			b = binary.LittleEndian.AppendUint64(b, uint64(v))
		}
	}
	return b
}

func boolByte(x bool) byte {
	if x {
		return 1
	}
	return 0
}

func encodeSubQuery(q *subQuery) []byte {
	b := []byte{msgSubQuery}
	b = binary.AppendUvarint(b, q.fork)
	var dl int64
	if !q.deadline.IsZero() {
		dl = q.deadline.UnixNano()
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(dl))
	b = append(b, boolByte(q.analyze))
	b = binary.AppendUvarint(b, uint64(q.start))
	b = binary.AppendUvarint(b, uint64(q.limit))
	b = binary.AppendUvarint(b, uint64(max(q.memory, 0)))
	b = appendSteps(b, q.steps)
	b = appendTable(b, q.table)
	b = appendFilters(b, q.filters)
	return appendReduce(b, q.reduce)
}

func appendReduce(b []byte, rs *reduceSpec) []byte {
	if rs == nil {
		return append(b, 0)
	}
	if rs.semiCol >= 0 {
		b = append(b, 1)
		b = binary.AppendUvarint(b, uint64(rs.semiCol))
	} else if tk := rs.topk; tk != nil {
		b = append(b, 3)
		b = binary.AppendUvarint(b, uint64(tk.k))
		b = binary.AppendUvarint(b, uint64(len(tk.cols)))
		for i, c := range tk.cols {
			b = binary.AppendUvarint(b, uint64(c))
			b = append(b, boolByte(tk.desc[i]))
		}
	} else {
		b = append(b, 2)
		b = binary.AppendUvarint(b, uint64(len(rs.distinct)))
		for _, c := range rs.distinct {
			b = binary.AppendUvarint(b, uint64(c))
		}
	}
	b = binary.AppendUvarint(b, uint64(len(rs.clashes)))
	for _, cl := range rs.clashes {
		b = binary.AppendUvarint(b, uint64(cl[0]))
		b = binary.AppendUvarint(b, uint64(cl[1]))
	}
	return b
}

// reduce decodes the reduce spec; its columns must be below ncols.
func (d *decoder) reduce(ncols int) *reduceSpec {
	if d.err != nil {
		return nil
	}
	col := func() int {
		c := d.uvarint()
		if c >= uint64(ncols) {
			if d.err == nil {
				d.err = fmt.Errorf("reduce column %d of %d", c, ncols)
			}
			return 0
		}
		return int(c)
	}
	rs := &reduceSpec{semiCol: -1}
	switch d.byte() {
	case 0:
		return nil
	case 1:
		rs.semiCol = col()
	case 2:
		n := d.uvarint()
		if n > uint64(ncols) {
			d.err = fmt.Errorf("reduce of %d columns of %d", n, ncols)
			return nil
		}
		rs.distinct = make([]int, 0, n)
		for i := uint64(0); i < n && d.err == nil; i++ {
			rs.distinct = append(rs.distinct, col())
		}
	case 3:
		k, n := d.uvarint(), d.uvarint()
		if k == 0 || k > math.MaxInt32 || n == 0 || n > uint64(ncols) {
			if d.err == nil {
				d.err = fmt.Errorf("top-k of %d rows by %d columns of %d", k, n, ncols)
			}
			return nil
		}
		tk := &topKSpec{k: int(k)}
		for i := uint64(0); i < n && d.err == nil; i++ {
			tk.cols = append(tk.cols, col())
			tk.desc = append(tk.desc, d.byte() != 0)
		}
		rs.topk = tk
	default:
		if d.err == nil {
			d.err = errors.New("bad reduce kind")
		}
		return nil
	}
	n := d.uvarint()
	if n > uint64(ncols) {
		d.err = fmt.Errorf("reduce with %d carried columns of %d", n, ncols)
		return nil
	}
	for i := uint64(0); i < n && d.err == nil; i++ {
		rs.clashes = append(rs.clashes, [2]int{col(), col()})
	}
	return rs
}

func encodeReply(r *reply) []byte {
	b := []byte{msgReply}
	b = binary.AppendUvarint(b, r.fork)
	if r.err != "" {
		b = append(b, max(r.kind, 1))
		b = binary.AppendUvarint(b, uint64(len(r.err)))
		b = append(b, r.err...)
		return b
	}
	b = append(b, 0)
	b = appendTable(b, r.table)
	b = binary.AppendUvarint(b, uint64(len(r.stats)))
	for i := range r.stats {
		s := &r.stats[i]
		for _, v := range [...]uint64{s.RowsIn, s.RowsOut, uint64(s.Time), s.Reads, s.ReadBytes, s.RoundTrips, s.Messages, s.MessageBytes, s.Forks} {
			b = binary.AppendUvarint(b, v)
		}
	}
	return b
}

func encodeCancel(fork uint64) []byte {
	return binary.AppendUvarint([]byte{msgCancel}, fork)
}

// decoder reads a message; the first error sticks.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) byte() byte {
	if d.err != nil || len(d.b) < 1 {
		d.err = errShort
		return 0
	}
	x := d.b[0]
	d.b = d.b[1:]
	return x
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	x, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errShort
		return 0
	}
	d.b = d.b[n:]
	return x
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	x, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errShort
		return 0
	}
	d.b = d.b[n:]
	return x
}

func (d *decoder) u64() uint64 {
	if d.err != nil || len(d.b) < 8 {
		d.err = errShort
		return 0
	}
	x := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return x
}

// count reads a length and checks it against the bytes left (each element
// takes at least min bytes), so a corrupt message cannot make us allocate.
func (d *decoder) count(min int) int {
	n := d.uvarint()
	if d.err == nil && n > uint64(len(d.b)/max(1, min)+1) {
		d.err = fmt.Errorf("length %d exceeds the message", n)
		return 0
	}
	return int(n)
}

func (d *decoder) operand() planner.Operand {
	o := planner.Operand{Kind: planner.OperandKind(d.byte())}
	switch o.Kind {
	case planner.OpConst:
		o.ID = ID(d.uvarint())
	case planner.OpVar:
		o.Col = int(d.uvarint())
	}
	return o
}

func (d *decoder) steps(ncolsMax int) []planner.Step {
	n := d.count(10)
	steps := make([]planner.Step, n)
	for i := range steps {
		s := &steps[i]
		s.Kind = planner.StepKind(d.byte())
		s.Pattern = int(d.varint())
		s.From = d.operand()
		s.Pred = d.operand()
		s.PredNew = d.byte() == 1
		s.Dir = planner.Dir(d.byte())
		s.To = d.operand()
		s.ToNew = d.byte() == 1
		s.Mode = planner.Mode(d.byte())
		s.Partitioned = int(d.varint())
		s.EstRows = math.Float64frombits(d.u64())
		s.TypeCheck = ID(d.uvarint())
		s.CheckPattern = int(d.varint())
		if s.Intersect = d.byte() == 1; s.Intersect {
			s.IntersectCol = int(d.uvarint())
			s.IntersectPred = ID(d.uvarint())
			s.IntersectDir = planner.Dir(d.byte())
			s.IntersectPattern = int(d.varint())
		}
	}
	return steps
}

func (d *decoder) table() *Table {
	ncols := d.count(1)
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	t := &Table{Cols: make([][]ID, ncols), N: int(n)}
	for c := range t.Cols {
		if d.byte() == 0 {
			continue
		}
		if d.err != nil || uint64(len(d.b)) < n*8 {
			d.err = errShort
			return nil
		}
		col := make([]ID, n)
		for i := range col {
			col[i] = ID(binary.LittleEndian.Uint64(d.b[i*8:]))
		}
		d.b = d.b[n*8:]
		t.Cols[c] = col
	}
	return t
}

func decodeSubQuery(b []byte) (*subQuery, error) {
	d := &decoder{b: b[1:]}
	q := &subQuery{fork: d.uvarint()}
	if dl := int64(d.u64()); dl != 0 {
		q.deadline = time.Unix(0, dl)
	}
	q.analyze = d.byte() == 1
	q.start = int(d.uvarint())
	q.limit = int(min(d.uvarint(), math.MaxInt32))
	q.memory = int64(min(d.uvarint(), math.MaxInt64))
	q.steps = d.steps(0)
	q.table = d.table()
	q.filters = d.filters()
	ncols := 0
	if q.table != nil {
		ncols = len(q.table.Cols)
	}
	q.reduce = d.reduce(ncols)
	if d.err != nil {
		return nil, fmt.Errorf("cannot decode a sub-query: %w", d.err)
	}
	if q.start > len(q.steps) {
		return nil, fmt.Errorf("cannot decode a sub-query: start step %d of %d", q.start, len(q.steps))
	}
	for _, s := range q.steps {
		for _, o := range []planner.Operand{s.From, s.Pred, s.To} {
			if o.Kind == planner.OpVar && o.Col >= len(q.table.Cols) {
				return nil, fmt.Errorf("cannot decode a sub-query: column %d of %d", o.Col, len(q.table.Cols))
			}
		}
		if s.Intersect && (s.IntersectCol < 0 || s.IntersectCol >= len(q.table.Cols)) {
			return nil, fmt.Errorf("cannot decode a sub-query: column %d of %d", s.IntersectCol, len(q.table.Cols))
		}
	}
	return q, nil
}

func decodeReply(b []byte) (*reply, error) {
	d := &decoder{b: b[1:]}
	r := &reply{fork: d.uvarint()}
	if st := d.byte(); st >= 1 && st <= 3 {
		r.kind = st
		n := d.count(1)
		if d.err == nil && n <= len(d.b) {
			r.err = string(d.b[:n])
			if r.err == "" {
				r.err = "sub-query failed"
			}
		}
	} else {
		r.table = d.table()
		n := d.count(9)
		r.stats = make([]StepStats, n)
		for i := range r.stats {
			s := &r.stats[i]
			s.RowsIn, s.RowsOut, s.Time = d.uvarint(), d.uvarint(), time.Duration(d.uvarint())
			s.Reads, s.ReadBytes, s.RoundTrips = d.uvarint(), d.uvarint(), d.uvarint()
			s.Messages, s.MessageBytes, s.Forks = d.uvarint(), d.uvarint(), d.uvarint()
		}
	}
	if d.err != nil {
		return nil, fmt.Errorf("cannot decode a reply: %w", d.err)
	}
	return r, nil
}

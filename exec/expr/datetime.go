package expr

import (
	"cmp"
	"math/big"
	"strconv"
	"time"
)

// dateTime is the value of an xsd:dateTime or xsd:date (whose time is
// midnight). The fields are the local ("as written") values; the timezone
// offset, when present, maps them to the timeline. Fractional seconds beyond
// nanoseconds are truncated.
type dateTime struct {
	year                     int64
	month, day, hour, minute uint8
	nsec                     int64 // seconds of the minute in nanoseconds, 0 ≤ nsec < 60e9
	tz                       int16 // offset from UTC in minutes
	hasTZ                    bool
}

func isLeap(y int64) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

func daysIn(y int64, m uint8) uint8 {
	switch m {
	case 2:
		if isLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil returns the number of days from 1970-01-01 to y-m-d in the
// proleptic Gregorian calendar (year 0 exists, as in XSD 1.1).
func daysFromCivil(y int64, m, d uint8) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era = (y - 399) / 400
	}
	yoe := y - era*400
	mp := (int64(m) + 9) % 12
	doy := (153*mp+2)/5 + int64(d) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

func civilFromDays(z int64) (int64, uint8, uint8) {
	z += 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era = (z - 146096) / 146097
	}
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y := yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d := uint8(doy - (153*mp+2)/5 + 1)
	m := uint8(mp + 3)
	if mp >= 10 {
		m = uint8(mp - 9)
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

// timeline returns the instant of d as seconds and nanoseconds since
// 1970-01-01T00:00:00Z, reading a value without timezone as UTC.
func (d dateTime) timeline() (int64, int64) {
	s := daysFromCivil(d.year, d.month, d.day)*86400 + int64(d.hour)*3600 + int64(d.minute)*60 + d.nsec/1e9
	if d.hasTZ {
		s -= int64(d.tz) * 60
	}
	return s, d.nsec % 1e9
}

func cmpInstant(as, an, bs, bn int64) int {
	return cmp.Or(cmp.Compare(as, bs), cmp.Compare(an, bn))
}

// compareDateTimes orders two dateTimes (or two dates) by the XSD partial
// order: when exactly one has a timezone, the other may lie anywhere within
// ±14 hours of its local time, and ok is false if that makes the order
// indeterminate.
func compareDateTimes(a, b dateTime) (c int, ok bool) {
	as, an := a.timeline()
	bs, bn := b.timeline()
	if a.hasTZ == b.hasTZ {
		return cmpInstant(as, an, bs, bn), true
	}
	const fourteen = 14 * 3600
	if !a.hasTZ {
		c, ok := compareDateTimes(b, a)
		return -c, ok
	}
	// a has a timezone, b has none.
	if cmpInstant(as, an, bs-fourteen, bn) < 0 {
		return -1, true
	}
	if cmpInstant(as, an, bs+fourteen, bn) > 0 {
		return 1, true
	}
	return 0, false
}

func digits(s string, i, n int) (int, bool) {
	if i+n > len(s) {
		return 0, false
	}
	v := 0
	for j := i; j < i+n; j++ {
		if s[j] < '0' || s[j] > '9' {
			return 0, false
		}
		v = v*10 + int(s[j]-'0')
	}
	return v, true
}

// parseYMD parses -?YYYY-MM-DD at the start of s and returns the index after
// it.
func parseYMD(s string) (d dateTime, i int, ok bool) {
	neg := false
	if len(s) > 0 && s[0] == '-' {
		neg = true
		i = 1
	}
	start := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n := i - start
	if n < 4 || (n > 4 && s[start] == '0') || n > 16 {
		return d, 0, false
	}
	y, err := strconv.ParseInt(s[start:i], 10, 64)
	if err != nil {
		return d, 0, false
	}
	if neg {
		y = -y
	}
	if i >= len(s) || s[i] != '-' {
		return d, 0, false
	}
	m, ok1 := digits(s, i+1, 2)
	if !ok1 || i+3 >= len(s) || s[i+3] != '-' {
		return d, 0, false
	}
	day, ok2 := digits(s, i+4, 2)
	if !ok2 || m < 1 || m > 12 || day < 1 || day > int(daysIn(y, uint8(m))) {
		return d, 0, false
	}
	d.year, d.month, d.day = y, uint8(m), uint8(day)
	return d, i + 6, true
}

// parseTZ parses an optional timezone (Z, +hh:mm, -hh:mm) that must end s.
func parseTZ(s string, d *dateTime) bool {
	if s == "" {
		return true
	}
	if s == "Z" {
		d.hasTZ = true
		return true
	}
	if len(s) != 6 || (s[0] != '+' && s[0] != '-') || s[3] != ':' {
		return false
	}
	h, ok1 := digits(s, 1, 2)
	m, ok2 := digits(s, 4, 2)
	if !ok1 || !ok2 || m > 59 || h > 14 || (h == 14 && m != 0) {
		return false
	}
	off := h*60 + m
	if s[0] == '-' {
		off = -off
	}
	d.tz, d.hasTZ = int16(off), true
	return true
}

// parseDateTime parses the xsd:dateTime lexical form
// -?YYYY-MM-DDThh:mm:ss(.s+)?(Z|(+|-)hh:mm)?; 24:00:00 is the first instant
// of the next day.
func parseDateTime(s string) (dateTime, bool) {
	d, i, ok := parseYMD(s)
	if !ok || i+9 > len(s) || s[i] != 'T' || s[i+3] != ':' || s[i+6] != ':' {
		return dateTime{}, false
	}
	h, ok1 := digits(s, i+1, 2)
	mi, ok2 := digits(s, i+4, 2)
	sec, ok3 := digits(s, i+7, 2)
	if !ok1 || !ok2 || !ok3 || mi > 59 || sec > 59 || h > 24 {
		return dateTime{}, false
	}
	i += 9
	var nsec int64
	if i < len(s) && s[i] == '.' {
		i++
		start := i
		scale := int64(1e8)
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			nsec += int64(s[i]-'0') * scale
			scale /= 10
			i++
		}
		if i == start {
			return dateTime{}, false
		}
	}
	if h == 24 && (mi != 0 || sec != 0 || nsec != 0) {
		return dateTime{}, false
	}
	if !parseTZ(s[i:], &d) {
		return dateTime{}, false
	}
	d.hour, d.minute, d.nsec = uint8(h), uint8(mi), int64(sec)*1e9+nsec
	if h == 24 {
		d.hour = 0
		d.year, d.month, d.day = civilFromDays(daysFromCivil(d.year, d.month, d.day) + 1)
	}
	return d, true
}

// parseDate parses the xsd:date lexical form -?YYYY-MM-DD(Z|(+|-)hh:mm)?.
func parseDate(s string) (dateTime, bool) {
	d, i, ok := parseYMD(s)
	if !ok || !parseTZ(s[i:], &d) {
		return dateTime{}, false
	}
	return d, true
}

// fromTime converts t (with its zone offset) to a dateTime.
func fromTime(t time.Time) dateTime {
	_, off := t.Zone()
	return dateTime{
		year: int64(t.Year()), month: uint8(t.Month()), day: uint8(t.Day()),
		hour: uint8(t.Hour()), minute: uint8(t.Minute()),
		nsec: int64(t.Second())*1e9 + int64(t.Nanosecond()),
		tz:   int16(off / 60), hasTZ: true,
	}
}

func appendPad(b []byte, v int64, width int) []byte {
	s := strconv.FormatInt(v, 10)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

// format returns the canonical lexical form (withTime: an xsd:dateTime,
// else an xsd:date).
func (d dateTime) format(withTime bool) string {
	b := make([]byte, 0, 32)
	y := d.year
	if y < 0 {
		b = append(b, '-')
		y = -y
	}
	b = appendPad(b, y, 4)
	b = append(b, '-')
	b = appendPad(b, int64(d.month), 2)
	b = append(b, '-')
	b = appendPad(b, int64(d.day), 2)
	if withTime {
		b = append(b, 'T')
		b = appendPad(b, int64(d.hour), 2)
		b = append(b, ':')
		b = appendPad(b, int64(d.minute), 2)
		b = append(b, ':')
		b = appendPad(b, d.nsec/1e9, 2)
		if frac := d.nsec % 1e9; frac != 0 {
			f := []byte(strconv.FormatInt(frac+1e9, 10)[1:])
			for f[len(f)-1] == '0' {
				f = f[:len(f)-1]
			}
			b = append(b, '.')
			b = append(b, f...)
		}
	}
	return string(appendTZ(b, d))
}

func appendTZ(b []byte, d dateTime) []byte {
	if !d.hasTZ {
		return b
	}
	if d.tz == 0 {
		return append(b, 'Z')
	}
	off := int64(d.tz)
	if off < 0 {
		b = append(b, '-')
		off = -off
	} else {
		b = append(b, '+')
	}
	b = appendPad(b, off/60, 2)
	b = append(b, ':')
	return appendPad(b, off%60, 2)
}

// seconds returns the seconds field as an xsd:decimal.
func (d dateTime) seconds() Value {
	return decimalValue(new(big.Rat).SetFrac(big.NewInt(d.nsec), big.NewInt(1e9)))
}

// timezoneDuration returns the offset as an xsd:dayTimeDuration lexical
// form: "PT0S", "-PT8H", "PT5H30M".
func (d dateTime) timezoneDuration() string {
	off := int64(d.tz)
	if off == 0 {
		return "PT0S"
	}
	b := make([]byte, 0, 10)
	if off < 0 {
		b = append(b, '-')
		off = -off
	}
	b = append(b, "PT"...)
	if h := off / 60; h != 0 {
		b = strconv.AppendInt(b, h, 10)
		b = append(b, 'H')
	}
	if m := off % 60; m != 0 {
		b = strconv.AppendInt(b, m, 10)
		b = append(b, 'M')
	}
	return string(b)
}

// tzString returns the timezone as written by TZ: "Z", "-08:00", or "" when
// d has none.
func (d dateTime) tzString() string { return string(appendTZ(nil, d)) }

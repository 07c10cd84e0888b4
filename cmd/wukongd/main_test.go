package main

import "testing"

func TestRunExitStatus(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{
		{nil, 2},
		{[]string{"--help"}, 0},
		{[]string{"no-such-command"}, 2},
		{[]string{"version"}, 0},
		{[]string{"version", "--help"}, 0},
		{[]string{"version", "--no-such-flag"}, 1},
	} {
		if got := run(tc.args); got != tc.want {
			t.Errorf("run(%q) = %d, want %d", tc.args, got, tc.want)
		}
	}
}

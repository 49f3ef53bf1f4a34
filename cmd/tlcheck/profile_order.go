package main

import (
	"strings"

	"github.com/tlcheck/tlcheck/fpbound"
	"github.com/tlcheck/tlcheck/internal/cli"
)

// checkProfile validates compare's and compare-grad's --profile: a listed
// runtime profile, optionally followed by "+order", the summation order
// the runtime uses (fpbound.SumOrders; go doc ./fpbound, "Summation-order
// profiles"). A bad value is a usage error naming the flag, exit 2.
func checkProfile(v string) error {
	base, order, hasOrder := strings.Cut(v, "+")
	if err := oneOf("profile", base, fpbound.Profiles()...); err != nil {
		if !hasOrder {
			return err
		}
		return cli.Usagef("--profile: unknown value %q (want %s, optionally +%s)", v, strings.Join(fpbound.Profiles(), "|"), strings.Join(fpbound.SumOrders(), "|+"))
	}
	if err := fpbound.ValidProfile(v); err != nil {
		return cli.Usagef("--profile: unknown summation order %q in %q (want +%s, k from 2 to 1024)", order, v, strings.Join(fpbound.SumOrders(), "|+"))
	}
	return nil
}

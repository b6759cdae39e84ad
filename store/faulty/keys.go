package faulty

// Keys returns a policy that passes p the calls whose key keep accepts and
// lets every other call through untouched, without consulting p (so a
// Script's faults go to the kept keys' calls alone).
func Keys(p Policy, keep func(key string) bool) Policy {
	return func(c Call) Fault {
		if !keep(c.Key) {
			return Pass
		}
		return p(c)
	}
}

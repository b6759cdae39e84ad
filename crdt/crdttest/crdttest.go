// Package crdttest holds test inputs for the rules package crdt defines, so
// that every driver and adapter tests its keys against the same cases.
package crdttest

import "strings"

// InvalidKeys returns storage keys crdt.ValidateKey refuses, one per way to
// break its rule, by name.
func InvalidKeys() map[string]string {
	return map[string]string{
		"empty":          "",
		"NUL":            "\x00",
		"NUL inside":     "a\x00b",
		"tab":            "tab\there",
		"DEL":            "a\x7f",
		"C1 control":     "a\u0085",
		"invalid UTF-8":  "a\xffb",
		"256 bytes":      strings.Repeat("k", 256),
		"256 bytes UTF8": strings.Repeat("é", 128),
	}
}

// ValidKeys returns keys at the edges of what crdt.ValidateKey accepts.
func ValidKeys() map[string]string {
	return map[string]string{
		"one byte":        "k",
		"255 bytes":       strings.Repeat("k", 255),
		"UTF-8":           "ключ",
		"slash and space": "account/42 eu",
	}
}

//go:build !unix

package main

import (
	"errors"
	"time"
)

// processCPU is not measured off Unix.
func processCPU() (time.Duration, error) {
	return 0, errors.New("client CPU: not measured on this system")
}

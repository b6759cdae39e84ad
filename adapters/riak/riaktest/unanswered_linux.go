package riaktest

import (
	"net"
	"syscall"
	"testing"
	"time"
)

// UnansweredAddr returns a loopback address whose connection attempts
// hang, as a firewalled or powered-off host's do: a socket listening with
// a backlog of 0, never accepting, whose queue is full, so the kernel
// drops further SYNs. It skips the test where a dial does not hang.
func UnansweredAddr(t testing.TB) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := (&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: sa.(*syscall.SockaddrInet4).Port}).String()
	for range 4 { // fill the accept queue
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err != nil {
			break
		}
		t.Cleanup(func() { _ = c.Close() })
	}
	if c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond); err == nil {
		_ = c.Close()
		t.Skip("connections to a full listen queue do not hang here")
	}
	return addr
}

package callback

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// Timeout bounds one POST up to the answer's headers.
const Timeout = 10 * time.Second

// MaxResponseBytes of an answer's body are drained; the status decides.
const MaxResponseBytes = 4 << 10

// errRefusedAddress: the host leads to an address not Public.
var errRefusedAddress = errors.New("the callback's host leads to an internal address")

// ClientOptions shape Client; the zero value is the service's client.
type ClientOptions struct {
	AllowPrivate bool // lifts the address rules (CALLBACK_ALLOW_PRIVATE): local use and tests
	// Lookup resolves a host name; nil is the system resolver.
	Lookup func(ctx context.Context, host string) ([]netip.Addr, error)
	// Dial connects to an address already checked; nil is SafeDialer's.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	TLS  *tls.Config // nil: the system's roots
}

// SafeDialer is a net.Dialer whose Control refuses, as the socket
// connects, an address not Public unless allowPrivate: whatever resolved
// the name, the address connected to is the one checked.
func SafeDialer(allowPrivate bool) *net.Dialer {
	return &net.Dialer{
		Timeout: Timeout,
		Control: func(_, address string, _ syscall.RawConn) error {
			if !allowPrivate && !publicAddr(address) {
				return errRefusedAddress
			}
			return nil
		},
	}
}

// Client returns the HTTP client of callbacks. It resolves a host itself
// and connects only to addresses it checked (Public), so DNS rebinding
// reaches nothing, and the dialer checks again. It follows no redirect,
// uses no proxy from the environment, and gives up after Timeout.
func Client(o ClientOptions) *http.Client {
	lookup := o.Lookup
	if lookup == nil {
		lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	dial := o.Dial
	if dial == nil {
		dial = SafeDialer(o.AllowPrivate).DialContext
	}
	dialChecked := func(ctx context.Context, network, address string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(address)
		if err != nil {
			return nil, err
		}
		var addrs []netip.Addr
		if ip, err := netip.ParseAddr(host); err == nil {
			addrs = []netip.Addr{ip}
		} else if addrs, err = lookup(ctx, host); err != nil {
			return nil, err
		}
		errAll := fmt.Errorf("%w: no address for the host", errRefusedAddress)
		for _, ip := range addrs {
			if !o.AllowPrivate && !Public(ip) {
				continue // refused without a connection
			}
			conn, err := dial(ctx, network, net.JoinHostPort(ip.Unmap().String(), port))
			if err == nil {
				return conn, nil
			}
			errAll = err
		}
		return nil, errAll
	}
	return &http.Client{
		Timeout: Timeout,
		Transport: &http.Transport{
			Proxy:                  nil,
			DialContext:            dialChecked,
			TLSClientConfig:        o.TLS,
			TLSHandshakeTimeout:    Timeout,
			ResponseHeaderTimeout:  Timeout,
			MaxResponseHeaderBytes: 16 << 10,
			DisableKeepAlives:      true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

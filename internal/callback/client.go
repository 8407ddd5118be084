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

// Timeout bounds one POST: connecting, sending and the answer's status
// and headers. A receiver that has not answered by then failed the
// attempt.
const Timeout = 10 * time.Second

// MaxResponseBytes is the most of an answer's body that is read: the
// status decides, the body is only drained so the connection closes
// cleanly.
const MaxResponseBytes = 4 << 10

// errRefusedAddress: the callback's host leads to an address a callback
// may not reach (Public).
var errRefusedAddress = errors.New("the callback's host leads to an internal address")

// ClientOptions shape Client. The zero value is the service's client.
type ClientOptions struct {
	// AllowPrivate lifts the address rules (CALLBACK_ALLOW_PRIVATE): for
	// local use and tests only.
	AllowPrivate bool
	// Lookup resolves a host name; nil is the system resolver. Tests give
	// one that answers what they need.
	Lookup func(ctx context.Context, host string) ([]netip.Addr, error)
	// Dial connects to an address already checked; nil is SafeDialer's.
	// Tests give one that counts the connections made.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// TLS is the client's TLS configuration; nil is the system's roots.
	TLS *tls.Config
}

// SafeDialer is a net.Dialer whose Control refuses, just before the
// socket connects, an address a callback may not reach, unless
// allowPrivate: whatever resolved the name, the address connected to is
// the one checked.
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

// Client returns the HTTP client callbacks are sent with. It resolves a
// host itself and connects only to the addresses it checked (Public), so
// a name that resolves to a public address when the URL is checked and to
// an internal one when it is used (DNS rebinding) reaches nothing; the
// dialer's Control checks the address once more. It follows no redirect
// (a 3xx is the answer), uses no proxy from the environment, and gives up
// after Timeout.
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

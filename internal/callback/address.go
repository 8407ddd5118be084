package callback

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"transcriber/internal/errs"
)

// MaxURLLen is the longest callback_url, in bytes.
const MaxURLLen = 2048

const codeBadURL = "bad_callback_url"

func badURL(msg string) error { return errs.New(errs.Invalid, codeBadURL, msg) }

// CheckURL reports whether raw may be a callback_url: absolute https, at
// most MaxURLLen bytes, a host, no user info or fragment, and an IP
// address host Public. allowPrivate lets http and any address through.
// The error never echoes the URL. Where a name leads is checked at every
// connection (Client).
func CheckURL(raw string, allowPrivate bool) error {
	if raw == "" || len(raw) > MaxURLLen || !utf8.ValidString(raw) {
		return badURL("callback_url must be a URL of 1 to 2048 bytes")
	}
	if strings.ContainsAny(raw, " \t\r\n\x00\\") {
		return badURL("callback_url must be a URL without spaces, control characters or backslashes")
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil || !u.IsAbs() || u.Opaque != "":
		return badURL("callback_url must be an absolute URL")
	case u.Scheme != "https" && (!allowPrivate || u.Scheme != "http"):
		return badURL("callback_url must be an https URL")
	case u.User != nil:
		return badURL("callback_url must not carry a user name or password")
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return badURL("callback_url must not have a fragment")
	case u.Hostname() == "":
		return badURL("callback_url must name a host")
	}
	if port, err := strconv.Atoi(u.Port()); u.Port() != "" && (err != nil || port < 1 || port > 65535) {
		return badURL("callback_url has a port out of 1..65535") // url.Parse let only digits through
	}
	if ip, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]")); err == nil && !allowPrivate && !Public(ip) {
		return badURL("callback_url must not point at a private, loopback, link-local or other internal address")
	}
	return nil
}

// blocked are ranges netip's predicates miss: "this network",
// carrier-grade NAT (clouds use it inside), IETF assignments,
// benchmarking, reserved, broadcast; documentation ranges (no receiver
// has one on the internet, so it is a route set up inside); the IPv6
// prefixes that carry or tunnel to an IPv4 address (NAT64, 6to4, Teredo,
// IPv4-compatible, SIIT, which Unmap does not unwrap); site-local (still
// routed inside some networks); discard-only.
var blocked = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"), // TEST-NET-1
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"), // TEST-NET-2
	netip.MustParsePrefix("203.0.113.0/24"),  // TEST-NET-3
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("::/96"),           // IPv4-compatible (and ::, ::1)
	netip.MustParsePrefix("::ffff:0:0:0/96"), // SIIT, IPv4-translated
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("100::/64"),      // discard-only
	netip.MustParsePrefix("2001::/32"),     // Teredo
	netip.MustParsePrefix("2001:db8::/32"), // documentation
	netip.MustParsePrefix("2002::/16"),
	netip.MustParsePrefix("fec0::/10"), // site-local
}

// metadata hands out the function's credentials: link-local, refused
// anyway, and named so no later change lets it through.
var metadata = netip.MustParseAddr("169.254.169.254")

// Public reports whether a callback may connect to ip: not loopback,
// private, link-local, multicast, unspecified, metadata or blocked. An
// IPv4-mapped address is judged as the IPv4 address it carries.
func Public(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() || ip.Zone() != "" || ip == metadata {
		return false
	}
	if ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() {
		return false
	}
	for _, p := range blocked {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

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
			if ap, err := netip.ParseAddrPort(address); !allowPrivate && (err != nil || !Public(ap.Addr())) {
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

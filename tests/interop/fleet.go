// SPDX-License-Identifier: ISC

// fleet checks a central store's consistency proofs and cosignatures with
// implementations nobody here wrote: Go's golang.org/x/mod/sumdb/tlog
// (ProveTree, CheckTree: RFC 6962 / RFC 9162 consistency proofs) and
// golang.org/x/mod/sumdb/note (the host's signature), and the C2SP
// tlog-cosignature Ed25519 cosignature/v1 checked with crypto/ed25519
// from the spec's signed message (the note package verifies only its own
// signature type 0x01: a cosignature line is an "unverified" signature to
// it). Used by tests/integration/111-fleet-consistency.t and
// 113-fleet-witness.t; run with GOPATH=/usr/share/gocode GO111MODULE=off.
//
//	fleet prove LEAVES M N         print tlog.ProveTree(N, M) over the leaf
//	                               hashes in LEAVES (hex, one a line),
//	                               one base64 hash a line
//	fleet check LEAVES M N PROOF   tlog.CheckTree of PROOF (base64 lines)
//	                               between the trees of M and N leaves
//	fleet cosig HOSTVKEY WVKEY NOTE
//	                               verify NOTE's host signature with the
//	                               note package, then its cosignature by
//	                               the witness key WVKEY (type 0x04);
//	                               print "cosigned ORIGIN SIZE TIME"
package main

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

func die(f string, a ...interface{}) {
	fmt.Fprintf(os.Stderr, "fleet: "+f+"\n", a...)
	os.Exit(1)
}

// The stored hashes of a tree over the leaf hashes, as tlog keeps them.
func stored(path string) (tlog.HashReaderFunc, int64) {
	f, err := os.Open(path)
	if err != nil {
		die("%v", err)
	}
	defer f.Close()
	var hashes []tlog.Hash
	var n int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		b, err := hex.DecodeString(strings.TrimSpace(sc.Text()))
		if err != nil || len(b) != 32 {
			die("%s: not a hex hash: %q", path, sc.Text())
		}
		var h tlog.Hash
		copy(h[:], b)
		// StoredHashesForRecordHash needs the hashes stored so far.
		r := tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
			out := make([]tlog.Hash, len(idx))
			for i, x := range idx {
				out[i] = hashes[x]
			}
			return out, nil
		})
		add, err := tlog.StoredHashesForRecordHash(n, h, r)
		if err != nil {
			die("%v", err)
		}
		hashes = append(hashes, add...)
		n++
	}
	return func(idx []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(idx))
		for i, x := range idx {
			if x < 0 || x >= int64(len(hashes)) {
				return nil, fmt.Errorf("index %d out of range", x)
			}
			out[i] = hashes[x]
		}
		return out, nil
	}, n
}

func num(s string) int64 {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		die("%q: not a number", s)
	}
	return v
}

func cosig(hostVkey, wVkey, path string) {
	msg, err := os.ReadFile(path)
	if err != nil {
		die("%v", err)
	}
	v, err := note.NewVerifier(hostVkey)
	if err != nil {
		die("host key: %v", err)
	}
	n, err := note.Open(msg, note.VerifierList(v))
	if err != nil {
		die("note.Open: %v", err)
	}
	lines := strings.SplitN(n.Text, "\n", 3)
	// The witness key: NAME+HASH+base64(0x04 || pk), the hash
	// SHA-256(NAME || "\n" || 0x04 || pk)[:4].
	parts := strings.SplitN(wVkey, "+", 3)
	if len(parts) != 3 {
		die("witness key: not NAME+HASH+KEY")
	}
	name := parts[0]
	key, err := base64.StdEncoding.DecodeString(parts[2])
	if err != nil || len(key) != 33 || key[0] != 0x04 {
		die("witness key: not type 0x04 with a 32-byte key")
	}
	id := sha256.Sum256(append([]byte(name+"\n"), key...))
	if hex.EncodeToString(id[:4]) != parts[1] {
		die("witness key: the hash does not match")
	}
	found := false
	for _, s := range n.UnverifiedSigs {
		if s.Name != name || s.Hash != binary.BigEndian.Uint32(id[:4]) {
			continue
		}
		sig, err := base64.StdEncoding.DecodeString(s.Base64)
		if err != nil || len(sig) != 4+8+64 {
			die("cosignature: not key id, timestamp and a 64-byte signature")
		}
		ts := binary.BigEndian.Uint64(sig[4:12])
		var m bytes.Buffer
		fmt.Fprintf(&m, "cosignature/v1\ntime %d\n", ts)
		m.WriteString(n.Text)
		if !ed25519.Verify(ed25519.PublicKey(key[1:]), m.Bytes(), sig[12:]) {
			die("cosignature by %s does not verify", name)
		}
		fmt.Printf("cosigned %s %s %d\n", lines[0], lines[1], ts)
		found = true
	}
	if !found {
		die("no cosignature by %s", name)
	}
}

func main() {
	if len(os.Args) < 2 {
		die("usage: fleet prove|check|cosig ...")
	}
	switch {
	case os.Args[1] == "prove" && len(os.Args) == 5:
		r, n := stored(os.Args[2])
		m, nn := num(os.Args[3]), num(os.Args[4])
		if nn > n {
			die("only %d leaves", n)
		}
		p, err := tlog.ProveTree(nn, m, r)
		if err != nil {
			die("ProveTree: %v", err)
		}
		for _, h := range p {
			fmt.Println(base64.StdEncoding.EncodeToString(h[:]))
		}
	case os.Args[1] == "check" && len(os.Args) == 6:
		r, _ := stored(os.Args[2])
		m, nn := num(os.Args[3]), num(os.Args[4])
		oldh, err := tlog.TreeHash(m, r)
		if err != nil {
			die("TreeHash: %v", err)
		}
		newh, err := tlog.TreeHash(nn, r)
		if err != nil {
			die("TreeHash: %v", err)
		}
		b, err := os.ReadFile(os.Args[5])
		if err != nil {
			die("%v", err)
		}
		var p tlog.TreeProof
		for _, l := range strings.Fields(string(b)) {
			h, err := base64.StdEncoding.DecodeString(l)
			if err != nil || len(h) != 32 {
				die("proof: not base64 of 32 bytes: %q", l)
			}
			var x tlog.Hash
			copy(x[:], h)
			p = append(p, x)
		}
		if err := tlog.CheckTree(p, nn, newh, m, oldh); err != nil {
			die("CheckTree(%d -> %d): %v", m, nn, err)
		}
		fmt.Printf("consistent %d %d %d\n", m, nn, len(p))
	case os.Args[1] == "cosig" && len(os.Args) == 5:
		cosig(os.Args[2], os.Args[3], os.Args[4])
	default:
		die("usage: fleet prove LEAVES M N | check LEAVES M N PROOF | cosig HOSTVKEY WVKEY NOTE")
	}
}

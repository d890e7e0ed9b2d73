// SPDX-License-Identifier: ISC

// c2sp checks sbx's signed notes, verifier keys and Merkle proofs with an
// implementation nobody here wrote: Go's golang.org/x/mod/sumdb/note and
// tlog (Debian: golang-golang-x-mod-dev). Used by
// tests/integration/62-audit-c2sp.t; run with GOPATH=/usr/share/gocode
// GO111MODULE=off.
//
//	c2sp open VKEY NOTE            verify NOTE (a file) with VKEY; print
//	                               "origin size root"
//	c2sp cosign VKEY NOTE N OUT    add N witness signatures (fresh keys)
//	                               to NOTE, written to OUT
//	c2sp name NAME                 exit 0 if NAME may be a key name
//	                               (note.NewSigner accepts it)
//	c2sp proof VKEY PROOF          check every inclusion proof of an
//	                               sbx-audit prove document
//	c2sp sign NAME NOTE            print a verifier key for NAME and sign
//	                               the text of NOTE with it (a note signed
//	                               by Go, for sbx to refuse or accept)
package main

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

func die(f string, a ...interface{}) {
	fmt.Fprintf(os.Stderr, "c2sp: "+f+"\n", a...)
	os.Exit(1)
}

func open(vkey, path string) (*note.Note, []string) {
	v, err := note.NewVerifier(vkey)
	if err != nil {
		die("NewVerifier(%q): %v", vkey, err)
	}
	msg, err := os.ReadFile(path)
	if err != nil {
		die("%v", err)
	}
	n, err := note.Open(msg, note.VerifierList(v))
	if err != nil {
		die("Open: %v", err)
	}
	lines := strings.Split(n.Text, "\n")
	if len(lines) < 4 || lines[3] != "" && len(lines) < 4 {
		die("not a checkpoint body: %q", n.Text)
	}
	if lines[0] != v.Name() {
		die("origin %q is not the key name %q", lines[0], v.Name())
	}
	return n, lines
}

func main() {
	if len(os.Args) < 3 {
		die("usage: c2sp open|cosign|name|proof|sign ...")
	}
	switch os.Args[1] {
	case "open":
		_, l := open(os.Args[2], os.Args[3])
		fmt.Println(l[0], l[1], l[2])
	case "cosign":
		n, _ := open(os.Args[2], os.Args[3])
		k, _ := strconv.Atoi(os.Args[4])
		var signers []note.Signer
		for i := 0; i < k; i++ {
			skey, _, err := note.GenerateKey(rand.Reader, fmt.Sprintf("witness%d.example/w", i))
			if err != nil {
				die("GenerateKey: %v", err)
			}
			s, err := note.NewSigner(skey)
			if err != nil {
				die("NewSigner: %v", err)
			}
			signers = append(signers, s)
		}
		msg, err := note.Sign(n, signers...)
		if err != nil {
			die("Sign: %v", err)
		}
		if err := os.WriteFile(os.Args[5], msg, 0o644); err != nil {
			die("%v", err)
		}
	case "name":
		// GenerateKey does not check the name; NewSigner does (isValidName)
		skey, _, err := note.GenerateKey(rand.Reader, os.Args[2])
		if err != nil {
			os.Exit(1)
		}
		if _, err := note.NewSigner(skey); err != nil {
			os.Exit(1)
		}
	case "sign":
		skey, vkey, err := note.GenerateKey(rand.Reader, os.Args[2])
		if err != nil {
			die("GenerateKey: %v", err)
		}
		s, _ := note.NewSigner(skey)
		text, err := os.ReadFile(os.Args[3])
		if err != nil {
			die("%v", err)
		}
		msg, err := note.Sign(&note.Note{Text: string(text)}, s)
		if err != nil {
			die("Sign: %v", err)
		}
		fmt.Println(vkey)
		os.Stdout.Write(msg)
	case "proof":
		var doc struct {
			Checkpoint string
			Proofs     []struct {
				LeafIndex int64 `json:"leaf_index"`
				TreeSize  int64 `json:"tree_size"`
				Blob      string
				Path      []string
			}
		}
		raw, err := os.ReadFile(os.Args[3])
		if err != nil {
			die("%v", err)
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			die("proof: %v", err)
		}
		tmp, _ := os.CreateTemp("", "c2sp-note")
		tmp.WriteString(doc.Checkpoint)
		tmp.Close()
		defer os.Remove(tmp.Name())
		_, l := open(os.Args[2], tmp.Name())
		size, _ := strconv.ParseInt(l[1], 10, 64)
		var root tlog.Hash
		r, err := base64.StdEncoding.DecodeString(l[2])
		if err != nil || len(r) != 32 {
			die("root %q", l[2])
		}
		copy(root[:], r)
		for _, p := range doc.Proofs {
			blob, _ := base64.StdEncoding.DecodeString(p.Blob)
			var proof tlog.RecordProof
			for _, h := range p.Path {
				b, _ := base64.StdEncoding.DecodeString(h)
				var x tlog.Hash
				copy(x[:], b)
				proof = append(proof, x)
			}
			if p.TreeSize != size {
				die("proof for tree %d, checkpoint %d", p.TreeSize, size)
			}
			if err := tlog.CheckRecord(proof, size, root, p.LeafIndex, tlog.RecordHash(blob)); err != nil {
				die("leaf %d: %v", p.LeafIndex, err)
			}
		}
		fmt.Println("proofs", len(doc.Proofs), "ok")
	default:
		die("unknown command %q", os.Args[1])
	}
}

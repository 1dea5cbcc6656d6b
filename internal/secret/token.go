package secret

import (
	"crypto/rand"
	"crypto/sha256"
	"math/big"
)

const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// Token returns prefix followed by n random base62 characters (about 5.95
// bits each: 43 characters carry 256 bits).
func Token(prefix string, n int) string {
	out := make([]byte, 0, len(prefix)+n)
	out = append(out, prefix...)
	max := big.NewInt(int64(len(alphabet)))
	for range n {
		i, err := rand.Int(rand.Reader, max)
		if err != nil {
			panic("secret: crypto/rand failed: " + err.Error())
		}
		out = append(out, alphabet[i.Int64()])
	}
	return string(out)
}

// Hash is the SHA-256 digest by which a token is stored and looked up. A
// plain digest is enough: tokens carry 256 random bits, so there is nothing
// to brute-force, and a digest lookup leaks nothing about other keys.
func Hash(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

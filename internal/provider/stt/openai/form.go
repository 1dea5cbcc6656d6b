package openai

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"mime/multipart"
	"net/textproto"
	"strings"

	"github.com/parley-voice/parley/internal/provider/stt"
)

// MaxWAV is the largest WAV Transcribe sends: the API refuses requests over
// 25 MiB, and the rest of the form takes well under the 1 KiB left over.
const MaxWAV = 25<<20 - 1<<10

// maxSamples is how many samples fit in MaxWAV after the 44-byte header.
const maxSamples = (MaxWAV - wavHeader) / 2

const wavHeader = 44

// languageCode is the ISO-639-1 code the API wants for a BCP 47 tag: the
// primary subtag, lower-cased ("" stays "": the model detects). Three
// letters pass too, for servers that know more languages than ISO-639-1
// has codes for (Whisper's "haw", "yue"); OpenAI refuses them itself.
func languageCode(tag string) (string, error) {
	if tag == "" {
		return "", nil
	}
	primary, _, _ := strings.Cut(strings.ReplaceAll(tag, "_", "-"), "-")
	ok := len(primary) == 2 || len(primary) == 3
	for _, c := range primary {
		ok = ok && ('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z')
	}
	if !ok {
		return "", fmt.Errorf("%w: %q is not a BCP 47 language tag", stt.ErrLanguage, tag)
	}
	return strings.ToLower(primary), nil
}

// form is the multipart body of a transcription request and its
// Content-Type. language "" is left out.
func form(pcm []int16, rate int, model, language string) ([]byte, string) {
	var buf bytes.Buffer
	buf.Grow(wavHeader + 2*len(pcm) + 1<<10)
	w := multipart.NewWriter(&buf)
	// Writes to a bytes.Buffer cannot fail.
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="file"; filename="utterance.wav"`)
	h.Set("Content-Type", "audio/wav")
	file, _ := w.CreatePart(h)
	_, _ = file.Write(wav(pcm, rate))
	_ = w.WriteField("model", model)
	if language != "" {
		_ = w.WriteField("language", language)
	}
	_ = w.WriteField("response_format", "json")
	_ = w.Close()
	return buf.Bytes(), w.FormDataContentType()
}

// wav is pcm as a mono 16-bit PCM WAV file. len(pcm) is at most maxSamples.
func wav(pcm []int16, rate int) []byte {
	data := uint32(2 * len(pcm))
	b := make([]byte, wavHeader, wavHeader+int(data))
	copy(b[0:], "RIFF")
	binary.LittleEndian.PutUint32(b[4:], 36+data)
	copy(b[8:], "WAVE")
	copy(b[12:], "fmt ")
	binary.LittleEndian.PutUint32(b[16:], 16)
	binary.LittleEndian.PutUint16(b[20:], 1) // PCM
	binary.LittleEndian.PutUint16(b[22:], 1) // mono
	binary.LittleEndian.PutUint32(b[24:], uint32(rate))
	binary.LittleEndian.PutUint32(b[28:], uint32(2*rate)) // bytes per second
	binary.LittleEndian.PutUint16(b[32:], 2)              // bytes per frame
	binary.LittleEndian.PutUint16(b[34:], 16)             // bits per sample
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], data)
	for _, s := range pcm {
		b = binary.LittleEndian.AppendUint16(b, uint16(s))
	}
	return b
}

import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { request as httpRequest } from 'node:http';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from './harness/http.js';
import { waitFor } from './harness/processes.js';
import { makeHome, removeHome, startServer, venvPython, type TestServer } from './harness/server.js';
import { tinyMediaModels, pythonHas, renderTextImage } from './harness/tiny-media-models.js';

// Real engines end to end: espeak-ng speaks, pocketsphinx listens, tesseract reads a
// rendered image, and a tiny random-weight Whisper and image captioner (built here)
// go through the Transformers pipelines. One server and one launch of each model
// serve every case in this file.
const SENTENCE = 'please open the door and turn on the light';
// espeak-ng's en-us voice at 150 words a minute (speed 150/175): pocketsphinx's US
// English model hears "he opened the door ..." in it; synthetic speech is recognised
// only approximately, so the test looks for keywords.
const SPEED = 150 / 175;

describe('audio and image models', () => {
  let server: TestServer;
  let work: string;
  let api: ReturnType<typeof client>;
  let spoken: Buffer;

  const post = async (route: string, form: FormData) => {
    const res = await fetch(server.url + route, { method: 'POST', body: form });
    const text = await res.text();
    let body: any;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    return { status: res.status, text, body, headers: res.headers };
  };
  const audioForm = (model: string, data: Buffer, fields: Record<string, string> = {}, filename = 'speech.wav') => {
    const form = new FormData();
    form.append('model', model);
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    form.append('file', new Blob([data]), filename);
    return form;
  };
  const imageForm = (model: string, data: Buffer, field = 'image') => {
    const form = new FormData();
    form.append('model', model);
    form.append(field, new Blob([data]), 'image.png');
    return form;
  };

  beforeAll(async () => {
    work = await makeHome('hangar-media-');
    const tiny = tinyMediaModels(['whisper', 'captioner', 'tts']);
    server = await startServer();
    api = client(server.url);
    const register = async (type: string, model: Record<string, unknown>) => {
      const res = await api.post(`/v1/model_registrations/${type}`, { model, persist: false });
      expect(res.status, res.text).toBe(200);
    };
    await register('audio', { model_name: 'tiny-whisper', model_family: 'whisper', model_ability: ['audio2text'], model_uri: tiny.whisper!.path });
    await register('audio', { model_name: 'tiny-tts', model_family: 'vits', model_ability: ['text2audio'], model_uri: tiny.tts!.path });
    await register('image', { model_name: 'tiny-captioner', model_family: 'image-to-text', model_ability: ['ocr'], model_uri: tiny.captioner!.path });
    const launches = [
      { model_name: 'espeak-ng', model_type: 'audio', model_uid: 'tts' },
      { model_name: 'pocketsphinx-en-us', model_type: 'audio', model_uid: 'asr' },
      { model_name: 'tesseract-ocr', model_type: 'image', model_uid: 'ocr' },
      { model_name: 'tiny-whisper', model_type: 'audio', model_uid: 'whisper' },
      { model_name: 'tiny-captioner', model_type: 'image', model_uid: 'captioner' },
      { model_name: 'tiny-tts', model_type: 'audio', model_uid: 'vits' },
    ];
    const results = await Promise.all(launches.map((l) => api.post('/v1/models', l)));
    for (const res of results) expect(res.status, res.text).toBe(200);
  }, 240_000);

  afterAll(async () => {
    await server?.stop();
    if (server) await removeHome(server.home);
    if (work) await removeHome(work);
  });

  it('speaks a sentence with espeak-ng and hears its keywords back with pocketsphinx', async () => {
    const speech = await fetch(`${server.url}/v1/audio/speech`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tts', input: SENTENCE, voice: 'en-us', response_format: 'wav', speed: SPEED }),
    });
    expect(speech.status).toBe(200);
    expect(speech.headers.get('content-type')).toBe('audio/wav');
    spoken = Buffer.from(await speech.arrayBuffer());
    expect(spoken.subarray(0, 4).toString('latin1')).toBe('RIFF');
    expect(spoken.length).toBeGreaterThan(22050); // more than half a second of 16-bit audio

    const heard = await post('/v1/audio/transcriptions', audioForm('asr', spoken));
    expect(heard.status, heard.text).toBe(200);
    expect(Object.keys(heard.body)).toEqual(['text', 'usage']);
    const words = (heard.body.text as string).toLowerCase();
    expect(words).toMatch(/open/);
    expect(words).toMatch(/door/);
  });

  it('renders transcripts as text, srt, vtt and verbose_json', async () => {
    const text = await post('/v1/audio/transcriptions', audioForm('asr', spoken, { response_format: 'text' }));
    expect(text.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(text.text).toMatch(/door.*\n$/);
    const srt = await post('/v1/audio/transcriptions', audioForm('asr', spoken, { response_format: 'srt' }));
    expect(srt.text).toMatch(/^1\n\d\d:\d\d:\d\d,\d\d\d --> \d\d:\d\d:\d\d,\d\d\d\n.*door/);
    const vtt = await post('/v1/audio/transcriptions', audioForm('asr', spoken, { response_format: 'vtt' }));
    expect(vtt.text).toMatch(/^WEBVTT\n\n\d\d:\d\d:\d\d\.\d\d\d --> /);
    const verbose = await post('/v1/audio/transcriptions', audioForm('asr', spoken, { response_format: 'verbose_json', 'timestamp_granularities[]': 'word' }));
    // OpenAI's words for the language, and its usage: the audio's seconds, rounded up.
    expect(verbose.body).toMatchObject({ task: 'transcribe', language: 'english' });
    expect(verbose.body.duration).toBeGreaterThan(1);
    expect(verbose.body.usage).toEqual({ type: 'duration', seconds: Math.ceil(verbose.body.duration) });
    expect(verbose.body.segments.length).toBeGreaterThan(0);
    expect(verbose.body.words.map((w: { word: string }) => w.word)).toContain('door');
    const translated = await post('/v1/audio/translations', audioForm('asr', spoken));
    expect(translated.body.text).toMatch(/door/);
    expect(translated.body.usage).toBeUndefined();
  });

  it("hears a browser's WebM and a phone's M4A, and speaks OpenAI's opus and aac", async () => {
    // The spoken WAV re-encoded as MediaRecorder (WebM/Opus) and a phone (M4A/AAC) write it, with FFmpeg (PyAV).
    const script = `
import io, sys, av, numpy as np, soundfile
samples, rate = soundfile.read(io.BytesIO(sys.stdin.buffer.read()), dtype="float32")
out = {}
for name, muxer, codec in (("webm", "webm", "libopus"), ("m4a", "ipod", "aac")):
    buffer = io.BytesIO()
    with av.open(buffer, mode="w", format=muxer) as container:
        stream = container.add_stream(codec, rate=48000, layout="mono")
        import scipy.signal
        frame = av.AudioFrame.from_ndarray(scipy.signal.resample_poly(samples, 320, 147).astype(np.float32).reshape(1, -1), format="flt", layout="mono")
        frame.sample_rate = 48000
        for packet in [*stream.encode(frame), *stream.encode(None)]:
            container.mux(packet)
    sys.stdout.buffer.write(len(buffer.getvalue()).to_bytes(4, "big") + buffer.getvalue())
`;
    const packed = execFileSync(venvPython, ['-c', script], { input: spoken });
    const webm = packed.subarray(4, 4 + packed.readUInt32BE(0));
    const m4aAt = 4 + webm.length;
    const m4a = packed.subarray(m4aAt + 4, m4aAt + 4 + packed.readUInt32BE(m4aAt));
    for (const [name, upload] of [['recording.webm', webm], ['recording.m4a', m4a]] as const) {
      const heard = await post('/v1/audio/transcriptions', audioForm('asr', upload, {}, name));
      expect(heard.status, `${name}: ${heard.text}`).toBe(200);
      expect(heard.body.text, name).toMatch(/door/);
    }
    for (const [format, type, magic] of [['opus', 'audio/opus', 'OggS'], ['aac', 'audio/aac', '\u00ff']] as const) {
      const res = await fetch(`${server.url}/v1/audio/speech`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'tts', input: 'hello world', response_format: format }) });
      expect([res.status, res.headers.get('content-type')]).toEqual([200, type]);
      expect(Buffer.from(await res.arrayBuffer()).subarray(0, magic.length).toString('latin1')).toBe(magic);
    }
  });

  it("streams a transcript as OpenAI's events through its SDK; refuses a stream where OpenAI has none", async () => {
    const sdk = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'not-needed', maxRetries: 0 });
    const whole = await sdk.audio.transcriptions.create({ model: 'asr', file: await toFile(spoken, 'speech.wav') });
    const events = await sdk.audio.transcriptions.create({ model: 'asr', file: await toFile(spoken, 'speech.wav'), stream: true });
    let deltas = '';
    let done: string | null = null;
    for await (const event of events) {
      if (event.type === 'transcript.text.delta') deltas += event.delta;
      if (event.type === 'transcript.text.done') done = event.text;
    }
    expect(done).toBe(whole.text);
    expect(deltas).toBe(whole.text);
    expect(deltas).toMatch(/door/);
    const srt = await post('/v1/audio/transcriptions', audioForm('asr', spoken, { stream: 'true', response_format: 'srt' }));
    expect([srt.status, srt.body?.error?.param], srt.text).toEqual([400, 'stream']);
    const translation = await post('/v1/audio/translations', audioForm('asr', spoken, { stream: 'true' }));
    expect([translation.status, translation.body?.error?.param], translation.text).toEqual([400, 'stream']);
  });

  it('makes flac, pcm, mp3 and a streamed wav', async () => {
    const speak = (extra: Record<string, unknown>) =>
      fetch(`${server.url}/v1/audio/speech`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'tts', input: 'hello world', ...extra }) });
    const flac = Buffer.from(await (await speak({ response_format: 'flac' })).arrayBuffer());
    expect(flac.subarray(0, 4).toString('latin1')).toBe('fLaC');
    // pcm is OpenAI's: 16-bit mono at 24 kHz (espeak-ng speaks at 22,050 Hz), whole or streamed.
    const wav = Buffer.from(await (await speak({ response_format: 'wav' })).arrayBuffer());
    const wavSeconds = (wav.length - 44) / 2 / wav.readUInt32LE(24);
    const pcm = await speak({ response_format: 'pcm' });
    expect(pcm.headers.get('content-type')).toBe('audio/pcm');
    const pcmBytes = (await pcm.arrayBuffer()).byteLength;
    expect(pcmBytes % 2).toBe(0);
    expect(pcmBytes / 2 / 24_000).toBeCloseTo(wavSeconds, 1);
    const pcmStreamed = Buffer.from(await (await speak({ response_format: 'pcm', stream: true })).arrayBuffer());
    expect(pcmStreamed.length / 2 / 24_000).toBeCloseTo(wavSeconds, 1);
    const mp3 = await speak({}); // OpenAI's default format
    expect(mp3.headers.get('content-type')).toBe('audio/mpeg');
    const head = Buffer.from(await mp3.arrayBuffer());
    expect(head.subarray(0, 3).toString('latin1') === 'ID3' || (head[0] === 0xff && (head[1]! & 0xe0) === 0xe0)).toBe(true);
    const streamed = await speak({ response_format: 'wav', stream: true });
    expect(streamed.status).toBe(200);
    let pieces = 0;
    const parts: Buffer[] = [];
    for await (const piece of streamed.body!) {
      pieces++;
      parts.push(Buffer.from(piece));
    }
    const whole = Buffer.concat(parts);
    expect(whole.subarray(0, 4).toString('latin1')).toBe('RIFF');
    expect(whole.length).toBeGreaterThan(10_000);
    expect(pieces).toBeGreaterThan(0);
  });

  it('stops speaking for a client that goes away mid-stream, and keeps serving', async () => {
    const controller = new AbortController();
    const long = Array.from({ length: 60 }, (_, i) => `sentence number ${i} is spoken slowly.`).join(' ');
    const res = await fetch(`${server.url}/v1/audio/speech`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tts', input: long, response_format: 'pcm', stream: true, speed: 0.5 }),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    expect((await reader.read()).done).toBe(false);
    controller.abort();
    expect(await waitFor(async () => (await api.get('/v1/models/tts/replicas')).body[0].in_flight === 0, 10_000)).toBe(true);
    const next = await api.post('/v1/audio/speech', { model: 'tts', input: 'still here', response_format: 'wav' });
    expect(next.status).toBe(200);
  });

  it('reads a rendered image back exactly with tesseract, with word boxes', async () => {
    const file = path.join(work, 'text.png');
    renderTextImage('Hangar reads 42 words', file);
    const res = await post('/v1/images/ocr', imageForm('ocr', await readFile(file)));
    expect(res.status, res.text).toBe(200);
    expect(res.body.text).toBe('Hangar reads 42 words');
    expect(res.body.words.map((w: { text: string }) => w.text)).toEqual(['Hangar', 'reads', '42', 'words']);
    for (const w of res.body.words) expect(w.box.width).toBeGreaterThan(0);
    expect(res.body.lang).toBe('eng');
    // A PDF is read page by page (Xinference's OCR route reads PDFs; it was a 400 here).
    const pdf = path.join(work, 'text.pdf');
    renderTextImage('Hangar reads 42 words', pdf);
    const fromPdf = await post('/v1/images/ocr', imageForm('ocr', await readFile(pdf)));
    expect(fromPdf.status, fromPdf.text).toBe(200);
    expect(fromPdf.body.text).toBe('Hangar reads 42 words');
    expect(fromPdf.body.pages.map((p: { page: number }) => p.page)).toEqual([1]);
    const pastTheEnd = imageForm('ocr', await readFile(pdf));
    pastTheEnd.append('kwargs', JSON.stringify({ pages: [2] }));
    expect((await post('/v1/images/ocr', pastTheEnd)).body.error).toMatchObject({ code: 'inference_invalid_input', param: 'pages' });
  });

  it('speaks with the tiny VITS model through the Transformers text-to-audio pipeline', async () => {
    const speak = (extra: Record<string, unknown>) =>
      fetch(`${server.url}/v1/audio/speech`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'vits', input: 'hello world', ...extra }) });
    const wav = Buffer.from(await (await speak({ response_format: 'wav' })).arrayBuffer());
    expect(wav.subarray(0, 4).toString('latin1')).toBe('RIFF');
    expect(wav.readUInt32LE(24)).toBe(16000); // the model's own sampling rate
    const flac = Buffer.from(await (await speak({ response_format: 'flac', stream: true })).arrayBuffer());
    expect(flac.subarray(0, 4).toString('latin1')).toBe('fLaC');
  });

  it('runs the tiny Whisper and the tiny captioner through the Transformers pipelines', async () => {
    const json = await post('/v1/audio/transcriptions', audioForm('whisper', spoken));
    expect(json.status, json.text).toBe(200);
    expect(typeof json.body.text).toBe('string');
    const verbose = await post('/v1/audio/translations', audioForm('whisper', spoken, { response_format: 'verbose_json' }));
    expect(verbose.status, verbose.text).toBe(200);
    expect(verbose.body).toMatchObject({ task: 'translate', text: expect.any(String) });
    expect(verbose.body.duration).toBeCloseTo(spoken.length / 2 / 22050, 0);
    const file = path.join(work, 'text.png');
    const caption = await post('/v1/images/ocr', imageForm('captioner', await readFile(file)));
    expect(caption.status, caption.text).toBe(200);
    expect(caption.body).toEqual({ model: 'captioner', text: expect.any(String) });
  });

  it('answers bad uploads and wrong models with clear errors', async () => {
    const notAudio = await post('/v1/audio/transcriptions', audioForm('asr', Buffer.from('this is not audio at all'), {}, 'notes.txt'));
    expect(notAudio.status).toBe(400);
    expect(notAudio.body.error).toMatchObject({ code: 'unsupported_upload_format', param: 'file' });
    expect(notAudio.body.detail).toMatch(/wav, flac, ogg, mp3, webm, mp4, m4a, aac/);
    // A WAV header over garbage passes the sniffing; the decoder in the runtime refuses it.
    const broken = Buffer.concat([Buffer.from('RIFF\u0000\u0000\u0000\u0000WAVE', 'latin1'), Buffer.alloc(64, 7)]);
    const damaged = await post('/v1/audio/transcriptions', audioForm('asr', broken));
    expect(damaged.status).toBe(400);
    expect(damaged.body.detail).toMatch(/could not be decoded; expected one of: wav, flac, ogg, mp3/);
    // Named as the route's own checks name it.
    expect(damaged.body.error.param).toBe('file');
    const tooBig = await post('/v1/audio/transcriptions', audioForm('asr', Buffer.alloc(26 * 1024 * 1024)));
    expect(tooBig.status).toBe(413);
    expect(tooBig.body.error).toMatchObject({ code: 'payload_too_large', param: 'file' });
    expect(tooBig.body.detail).toMatch(/25 MiB/);
    const noFile = new FormData();
    noFile.append('model', 'asr');
    const missing = await post('/v1/audio/transcriptions', noFile);
    expect(missing.status).toBe(400);
    expect(missing.body.error.param).toBe('file');
    const json = await api.post('/v1/audio/transcriptions', { model: 'asr' });
    expect(json.status).toBe(415);
    const badFormat = await post('/v1/audio/transcriptions', audioForm('asr', spoken, { response_format: 'docx' }));
    expect(badFormat.status).toBe(400);
    expect(badFormat.body.error.param).toBe('response_format');
    // A field the engine refuses is named, and numbers in forms are decimal ("" and hex were 0 and 1).
    const french = await post('/v1/audio/transcriptions', audioForm('asr', spoken, { language: 'fr' }));
    expect(french.body.error).toMatchObject({ code: 'inference_invalid_input', param: 'language' });
    for (const temperature of ['', '0x1']) {
      const odd = await post('/v1/audio/transcriptions', audioForm('asr', spoken, { temperature }));
      expect(odd.body.error, temperature).toMatchObject({ code: 'invalid_field', param: 'temperature' });
    }
    const blank = await api.post('/v1/audio/speech', { model: 'tts', input: '   ' });
    expect(blank.body.error).toMatchObject({ code: 'invalid_field', param: 'input' });
    const notImage = await post('/v1/images/ocr', imageForm('ocr', spoken));
    expect(notImage.body.error).toMatchObject({ code: 'unsupported_upload_format', param: 'image' });
    // Xinference's clients send voice "" unless told one: the model's default voice speaks.
    const defaultVoice = await fetch(`${server.url}/v1/audio/speech`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'tts', input: 'hi', voice: '', response_format: 'wav' }) });
    expect(defaultVoice.status).toBe(200);
    expect(Buffer.from(await defaultVoice.arrayBuffer()).subarray(0, 4).toString()).toBe('RIFF');
    // Xinference's client sends a form when it carries a voice prompt: read, the prompt refused by name,
    // and a form without one spoken as its JSON would be (requests writes speed "1.0", stream "False").
    const form = (fields: Record<string, string>, prompt?: Buffer) => {
      const f = new FormData();
      for (const [k, v] of Object.entries(fields)) f.append(k, v);
      if (prompt) f.append('prompt_speech', new Blob([prompt]), 'prompt_speech');
      return f;
    };
    const speechFields = { model: 'tts', input: 'hi', voice: '', response_format: 'wav', speed: '1.0', stream: 'False', kwargs: '{}' };
    const cloned = await post('/v1/audio/speech', form(speechFields, Buffer.from('RIFF0000WAVE')));
    expect(cloned.body.error).toMatchObject({ code: 'field_unsupported', param: 'prompt_speech' });
    const asForm = await fetch(`${server.url}/v1/audio/speech`, { method: 'POST', body: form(speechFields) });
    expect(asForm.status).toBe(200);
    expect(Buffer.from(await asForm.arrayBuffer()).subarray(0, 4).toString()).toBe('RIFF');
    const voice = await api.post('/v1/audio/speech', { model: 'tts', input: 'hi', voice: 'klingon' });
    expect(voice.status).toBe(400);
    expect(voice.body.error.param).toBe('voice');
    expect(voice.body.detail).toMatch(/Unknown voice 'klingon'/);
    expect(voice.headers.get('content-type')).toMatch(/^application\/json/);
    const streamedVoice = await api.post('/v1/audio/speech', { model: 'tts', input: 'hi', voice: 'klingon', stream: true });
    expect(streamedVoice.status).toBe(400);
    // espeak-ng's own names for its voices and their variants; a speed it cannot speak is said, not clamped.
    for (const name of ['en', 'fr', 'en+f3']) {
      const spokenBy = await api.post('/v1/audio/speech', { model: 'tts', input: 'hi', voice: name, response_format: 'wav' });
      expect(spokenBy.status, `${name}: ${spokenBy.text}`).toBe(200);
    }
    // What the request itself gives the engine cannot come again in kwargs (it reached the engine as a second value).
    const twiceInput = await api.post('/v1/audio/speech', { model: 'tts', input: 'hi', kwargs: { input: 'other' } });
    expect([twiceInput.status, twiceInput.body.error?.param], twiceInput.text).toEqual([400, 'kwargs.input']);
    const twiceAudio = await post('/v1/audio/transcriptions', audioForm('asr', spoken, { kwargs: JSON.stringify({ audio: 'x' }) }));
    expect([twiceAudio.status, twiceAudio.body?.error?.param], twiceAudio.text).toEqual([400, 'kwargs.audio']);
    expect(twiceAudio.body.error.message).not.toMatch(/multiple values|\(\)/);
    const slow = await api.post('/v1/audio/speech', { model: 'tts', input: 'hi', speed: 0.25 });
    expect([slow.status, slow.body.error?.param], slow.text).toEqual([400, 'speed']);
    expect(slow.body.error.message).toMatch(/slowest is 0\.46/);
    const seconds = async (speed: number) => {
      const res = await fetch(`${server.url}/v1/audio/speech`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'tts', input: SENTENCE, speed, response_format: 'pcm' }) });
      return (await res.arrayBuffer()).byteLength / 48_000;
    };
    expect(await seconds(4)).toBeLessThan((await seconds(2.5)) * 0.8);
    // OpenAI's audio events and speaking instructions: named, not dropped.
    for (const [field, value] of [['stream_format', 'sse'], ['instructions', 'Speak like a pirate.']] as const) {
      const refused = await api.post('/v1/audio/speech', { model: 'tts', input: 'hi', [field]: value });
      expect([refused.status, refused.body.error?.code, refused.body.error?.param], refused.text).toEqual([400, 'field_unsupported', field]);
    }
    const opus = await api.post('/v1/audio/speech', { model: 'tts', input: 'hi', response_format: 'ogg' });
    expect(opus.body.error.param).toBe('response_format');
    const listen = await api.post('/v1/audio/speech', { model: 'asr', input: 'hi' });
    expect(listen.body.error.code).toBe('ability_missing');
    const draw = await api.post('/v1/images/generations', { model: 'ocr', prompt: 'a cat' });
    expect(draw.body.error.code).toBe('ability_missing');
    renderTextImage('a cat', path.join(work, 'source.png'));
    const png = await readFile(path.join(work, 'source.png'));
    // The source image where OpenAI's SDK (image, image[]) and Xinference's client (image,
    // images, images[]) put it: read and checked, then refused only for the model's ability.
    for (const field of ['image', 'image[]', 'images', 'images[]']) {
      const form = imageForm('ocr', png, field);
      form.append('prompt', 'a cat');
      form.append('size', 'original');
      const edit = await post('/v1/images/edits', form);
      expect(edit.body.error, field).toMatchObject({ code: 'ability_missing', param: 'model' });
    }
    const twoSources = imageForm('ocr', png, 'image');
    twoSources.append('images[]', new Blob([png]), 'b.png');
    twoSources.append('prompt', 'a cat');
    const refusedSecond = await post('/v1/images/variations', twoSources);
    expect(refusedSecond.body.error).toMatchObject({ code: 'invalid_field', param: 'images[]' });
    // A field sent twice while another is absent used to replace the first file silently.
    const twice = imageForm('ocr', png, 'image');
    twice.append('image', new Blob([Buffer.from('not an image')]), 'b.png');
    twice.append('prompt', 'a cat');
    const refusedTwice = await post('/v1/images/variations', twice);
    expect(refusedTwice.body.error).toMatchObject({ code: 'invalid_field', param: 'image' });
    expect(refusedTwice.body.detail).toMatch(/came again/);
    // A variation needs no prompt (OpenAI's create_variation has none): checked through to the model's ability.
    const variation = await post('/v1/images/variations', imageForm('ocr', png, 'image'));
    expect(variation.body.error).toMatchObject({ code: 'ability_missing', param: 'model' });
    const edit = await post('/v1/images/edits', imageForm('ocr', png, 'image'));
    expect(edit.body.error).toMatchObject({ code: 'invalid_field', param: 'prompt' });
    const streamed = imageForm('ocr', png, 'image');
    streamed.append('prompt', 'a cat');
    streamed.append('stream', 'true');
    expect((await post('/v1/images/edits', streamed)).body.error).toMatchObject({ code: 'invalid_field', param: 'stream' });
    const wrongType = await post('/v1/audio/transcriptions', audioForm('ocr', spoken));
    expect(wrongType.body.error.code).toBe('wrong_model_type');
    const expired = await api.get('/v1/media/abcdef.png');
    expect(expired.status).toBe(404);
    expect(expired.body.error.code).toBe('media_not_found');
    // Any id the store does not hold is not found (one without an extension was a 400).
    expect((await api.get('/v1/media/unknown')).body.error?.code).toBe('media_not_found');
    // A file in a field the route does not read, after one it does: named itself (it was
    // refused as the previous field "sent again").
    const extra = imageForm('ocr', png, 'image');
    extra.append('foo', new Blob([spoken]), 'x.wav');
    const refusedExtra = await post('/v1/images/ocr', extra);
    expect(refusedExtra.body.error).toMatchObject({ code: 'invalid_field', param: 'foo' });
    expect(refusedExtra.body.detail).toMatch(/takes no file in this field/);
    // Form numbers are decimal on the speech form too (`0x2` was read as speed 2).
    const hexSpeed = await post('/v1/audio/speech', form({ ...speechFields, speed: '0x2' }));
    expect(hexSpeed.body.error).toMatchObject({ code: 'invalid_field', param: 'speed' });
    // The text fields of one form are held to 2 MiB together (64 fields of 1 MiB each were kept).
    const heavy = audioForm('asr', spoken);
    for (let i = 0; i < 3; i++) heavy.append(`note${i}`, 'x'.repeat(900 * 1024));
    const refusedHeavy = await post('/v1/audio/transcriptions', heavy);
    expect([refusedHeavy.status, refusedHeavy.body.error?.code, refusedHeavy.body.error?.param]).toEqual([413, 'payload_too_large', 'note2']);
    // A compressed form is refused at once (the multipart parser reads the raw body: it
    // was never answered, and held the service's shutdown).
    const asSent = new Request(server.url, { method: 'POST', body: audioForm('asr', spoken) });
    const compressed = await fetch(`${server.url}/v1/audio/transcriptions`, {
      method: 'POST',
      headers: { 'content-type': asSent.headers.get('content-type')!, 'content-encoding': 'gzip' },
      body: gzipSync(Buffer.from(await asSent.arrayBuffer())),
      signal: AbortSignal.timeout(30_000),
    });
    expect(compressed.status).toBe(415);
    expect(((await compressed.json()) as { error: { code: string } }).error.code).toBe('compressed_form');
    // A declared length no form can reach is refused before the body comes (a 5 GB
    // Content-Length that never came held the request until its 60 s timeout).
    const refusedAtOnce = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(`${server.url}/v1/audio/transcriptions`, { method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=b', 'content-length': String(5 * 1024 ** 3) }, timeout: 20_000 }, (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.on('timeout', () => req.destroy(new Error('no answer within 20 s')));
      req.write('--b\r\n');
    });
    expect(refusedAtOnce.status).toBe(413);
    expect(JSON.parse(refusedAtOnce.body).error.code).toBe('payload_too_large');
    // And the model still serves a good upload.
    expect((await post('/v1/audio/transcriptions', audioForm('asr', spoken))).status).toBe(200);
  });

  it('says in /v1/engines which engines run here and why the others cannot', async () => {
    expect(Object.keys((await api.get('/v1/engines/audio/pocketsphinx-en-us')).body)).toEqual(['pocketsphinx']);
    const espeak = (await api.get('/v1/engines/audio/espeak-ng')).body.espeak;
    expect(espeak).toEqual([{ model_name: 'espeak-ng', model_family: 'espeak', model_ability: ['text2audio'], memory_estimate: espeak[0].memory_estimate }]);
    // No weights to download: the runtime's own memory (docs/on-demand.md).
    expect(espeak[0].memory_estimate).toBeGreaterThan(0);
    expect(Array.isArray((await api.get('/v1/engines/image/tesseract-ocr')).body.tesseract)).toBe(true);
    const diffusion = (await api.get('/v1/engines/image/sd-turbo')).body.diffusers;
    if (pythonHas('diffusers')) expect(Array.isArray(diffusion)).toBe(true);
    else expect(diffusion).toBe('Engine diffusers needs Python module diffusers, which is not installed in the runtime environment');
  });

  it('is called by the OpenAI JavaScript SDK', async () => {
    const sdk = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'not-needed', maxRetries: 0 });
    const speech = await sdk.audio.speech.create({ model: 'tts', input: SENTENCE, voice: 'alloy', response_format: 'wav', speed: SPEED });
    const wav = Buffer.from(await speech.arrayBuffer());
    expect(wav.subarray(0, 4).toString('latin1')).toBe('RIFF');
    const transcript = await sdk.audio.transcriptions.create({ model: 'asr', file: await toFile(wav, 'speech.wav') });
    expect(transcript.text).toMatch(/door/);
    const translation = await sdk.audio.translations.create({ model: 'asr', file: await toFile(wav, 'speech.wav') });
    expect(translation.text).toMatch(/door/);
  });

  it('is called by the OpenAI Python SDK', () => {
    const script = `
import json, sys
from openai import OpenAI
c = OpenAI(base_url=sys.argv[1] + "/v1", api_key="not-needed", max_retries=0)
wav = c.audio.speech.create(model="tts", input=sys.argv[2], voice="alloy", response_format="wav", speed=float(sys.argv[3])).content
text = c.audio.transcriptions.create(model="asr", file=("speech.wav", wav)).text
srt = c.audio.transcriptions.create(model="asr", file=("speech.wav", wav), response_format="srt")
print(json.dumps({"riff": wav[:4].decode("latin1"), "text": text, "srt": srt}))
`;
    const out = JSON.parse(execFileSync(venvPython, ['-c', script, server.url, SENTENCE, String(SPEED)], { encoding: 'utf8', timeout: 120_000 }).trim().split('\n').pop()!);
    expect(out.riff).toBe('RIFF');
    expect(out.text).toMatch(/door/);
    expect(out.srt).toMatch(/^1\n00:00:0/);
  });
});

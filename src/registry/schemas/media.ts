import { z } from 'zod';
import { configObject, flatSpecSchema, hubModelId, hubRevision, modelHubSchema, modelSrcSchema, nullableString } from './common.js';

/**
 * Image, audio and video families share one shape (notes §8.2): a family name that
 * picks the pipeline, abilities, engine defaults, and one model per hub rather than
 * a list of specs. Only the abilities differ.
 */
export const MEDIA_ABILITIES = {
  image: ['text2image', 'image2image', 'inpainting', 'ocr'],
  audio: [
    'audio2text',
    'text2audio',
    'text2audio_zero_shot',
    'text2audio_voice_cloning',
    'text2audio_emotion_control',
    // Xinference's catalog has these too (voice design, speaker embeddings, music); no
    // engine here serves them, so a model of only these launches but answers no route.
    'text2audio_voice_design',
    'speaker_embedding',
    'text2music',
  ],
  video: ['text2video', 'image2video', 'firstlastframe2video'],
} as const;
export type MediaType = keyof typeof MEDIA_ABILITIES;

function familyFields(type: MediaType) {
  return {
    version: z.literal(2).default(2),
    model_name: z.string().min(1),
    model_family: z.string().min(1),
    // Xinference's own image template says `"model_ability": null` (its field is
    // Optional): a diffusion model then draws from text, which is what null means here.
    model_ability: type === 'image'
      ? z.preprocess((v) => (v === null ? ['text2image'] : v), z.array(z.enum(MEDIA_ABILITIES[type])).min(1))
      : z.array(z.enum(MEDIA_ABILITIES[type])).min(1),
    default_model_config: configObject.nullable().optional(),
    default_generate_config: configObject.nullable().optional(),
  };
}

/**
 * The flattened record keeps Xinference's top-level `model_id`/`model_hub`/`model_uri`
 * (the preferred hub's variant) and adds `model_specs`, one per hub, so every type
 * lists its specs the same way (Xinference synthesises the same list for its
 * detailed listing). A family whose engine ships its own model (pocketsphinx,
 * espeak-ng, tesseract) has one spec with `model_hub: null` and `model_id: null`.
 */
export function mediaRecordSchema(type: MediaType) {
  return z.looseObject({
    ...familyFields(type),
    model_id: hubModelId.nullable().default(null),
    model_hub: modelHubSchema.nullable().default(null),
    model_revision: hubRevision.nullable().default(null),
    model_uri: nullableString,
    model_specs: z.array(flatSpecSchema).min(1),
  });
}
export type MediaRecord = z.output<ReturnType<typeof mediaRecordSchema>>;

/** A built-in file: `model_src` per hub; absent when the engine ships its model. */
export function mediaBuiltinSchema(type: MediaType) {
  return z.looseObject({ ...familyFields(type), model_src: modelSrcSchema.optional() });
}

/** A custom definition: Xinference's flat form, one model given by `model_uri` and/or `model_id`. */
export function mediaCustomSchema(type: MediaType) {
  return z.looseObject({
    ...familyFields(type),
    model_id: hubModelId.nullable().default(null),
    model_hub: modelHubSchema.default('huggingface'),
    model_revision: hubRevision.nullable().default(null),
    model_uri: nullableString,
  });
}

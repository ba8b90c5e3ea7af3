// An OpenAPI v2 document in protobuf: gnostic's openapi.v2.Document (the vendored
// proto/github.com/google/gnostic/openapiv2/OpenAPIv2.proto), which kube-apiserver serves at
// /openapi/v2 to clients that ask for `application/com.github.proto-openapi.spec.v2[@.]v1.0+protobuf`
// first (kubectl before 1.27 asks for nothing else). The JSON document is mapped onto the messages
// as gnostic's compiler maps it: maps as ordered Named* pairs, `$ref` as `_ref`, `x-` keys as vendor
// extensions whose values (like `default`, `enum` and `example`) are YAML text, and the oneofs
// (parameter kinds by `in`, schema or boolean additionalProperties, a schema or a list of them as
// items) chosen by the JSON value's shape.
// Upstream: github.com/google/gnostic openapiv2 (ParseDocument, NewDocument) and kube-openapi's
// handler.ToProtoBinary.

import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type * as Protobuf from 'protobufjs';

type Json = unknown;
type JsonObject = Record<string, Json>;

const pkg = 'openapi.v2';
const protoPath = 'github.com/google/gnostic/openapiv2/OpenAPIv2.proto';

/** The vendored .proto beside this module (a bundle) or in the source tree (dist/src/… → src/…). */
function protoFile(): string {
  const candidates = [new URL(`./proto/${protoPath}`, import.meta.url), new URL(`../../../src/http/proto/${protoPath}`, import.meta.url)];
  for (const c of candidates) if (existsSync(c)) return fileURLToPath(c);
  throw new Error(`the OpenAPI v2 protobuf schema (src/http/proto/${protoPath}) is not found`);
}

let root: Protobuf.Root | undefined;

function schema(): Protobuf.Root {
  if (root) return root;
  const protobufjs = createRequire(import.meta.url)('protobufjs') as typeof Protobuf;
  root = new protobufjs.Root().loadSync(protoFile(), { keepCase: true });
  root.resolveAll();
  return root;
}

const isObject = (v: Json): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `basePath` → `base_path`, as gnostic names the fields of a JSON key. */
const snake = (k: string): string => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** A YAML text of a value (JSON is YAML; gnostic's readers unmarshal it with a YAML parser). */
const anyOf = (v: Json): JsonObject => ({ yaml: `${JSON.stringify(v)}\n` });

const nonBodyParameterField: Record<string, string> = {
  header: 'header_parameter_sub_schema',
  formData: 'form_data_parameter_sub_schema',
  query: 'query_parameter_sub_schema',
  path: 'path_parameter_sub_schema',
};

function securityField(v: JsonObject): string | undefined {
  if (v.type === 'basic') return 'basic_authentication_security';
  if (v.type === 'apiKey') return 'api_key_security';
  if (v.type !== 'oauth2') return undefined;
  return {
    implicit: 'oauth2_implicit_security',
    password: 'oauth2_password_security',
    application: 'oauth2_application_security',
    accessCode: 'oauth2_access_code_security',
  }[String(v.flow)];
}

class Converter {
  constructor(private readonly root: Protobuf.Root) {}

  private type(name: string): Protobuf.Type {
    return this.root.lookupType(`${pkg}.${name}`);
  }

  /** Named pairs of a JSON object's entries, each value as the pair message's `value` field. */
  private named(v: JsonObject, pairType: Protobuf.Type, keep: (k: string) => boolean = () => true): JsonObject[] {
    const valueField = pairType.fields.value!;
    return Object.entries(v)
      .filter(([k]) => keep(k))
      .map(([name, value]) => ({ name, value: valueField.resolvedType ? this.convert(value, valueField.resolvedType as Protobuf.Type) : value }));
  }

  private extensions(v: JsonObject): JsonObject[] {
    return Object.entries(v)
      .filter(([k]) => k.startsWith('x-'))
      .map(([name, value]) => ({ name, value: anyOf(value) }));
  }

  convert(v: Json, t: Protobuf.Type): JsonObject {
    switch (t.name) {
      case 'Any':
        return anyOf(v);
      case 'TypeItem':
        return { value: Array.isArray(v) ? v : [v] };
      case 'ItemsItem':
        return { schema: (Array.isArray(v) ? v : [v]).map((s) => this.convert(s, this.type('Schema'))) };
      case 'AdditionalPropertiesItem':
        return typeof v === 'boolean' ? { boolean: v } : { schema: this.convert(v, this.type('Schema')) };
      case 'SchemaItem':
        return { schema: this.convert(v, this.type('Schema')) };
      case 'StringArray':
        return { value: v };
    }
    if (!isObject(v)) return {};
    switch (t.name) {
      case 'ParametersItem':
      case 'ResponseValue':
        if (typeof v.$ref === 'string')
          return { json_reference: { _ref: v.$ref, ...(typeof v.description === 'string' ? { description: v.description } : {}) } };
        return t.name === 'ParametersItem' ? { parameter: this.convert(v, this.type('Parameter')) } : { response: this.convert(v, this.type('Response')) };
      case 'Parameter': {
        if (v.in === 'body') return { body_parameter: this.convert(v, this.type('BodyParameter')) };
        const field = nonBodyParameterField[String(v.in)];
        if (!field) return {};
        const sub = this.type('NonBodyParameter').fields[field]!.resolvedType as Protobuf.Type;
        return { non_body_parameter: { [field]: this.convert(v, sub) } };
      }
      case 'SecurityDefinitionsItem': {
        const field = securityField(v);
        return field ? { [field]: this.convert(v, t.fields[field]!.resolvedType as Protobuf.Type) } : {};
      }
      case 'Paths':
        return { path: this.named(v, this.type('NamedPathItem'), (k) => k.startsWith('/')), vendor_extension: this.extensions(v) };
      case 'Responses':
        return { response_code: this.named(v, this.type('NamedResponseValue'), (k) => !k.startsWith('x-')), vendor_extension: this.extensions(v) };
    }
    const fields = t.fields;
    const additional = fields.additional_properties;
    if (additional && Object.keys(fields).length === 1) return { additional_properties: this.named(v, additional.resolvedType as Protobuf.Type) };

    const out: JsonObject = {};
    for (const [k, value] of Object.entries(v)) {
      if (k.startsWith('x-')) continue;
      const field = fields[k === '$ref' ? '_ref' : snake(k)];
      if (!field || value === null) continue;
      const ft = field.resolvedType;
      if (ft && 'fields' in ft) {
        const mt = ft as Protobuf.Type;
        out[field.name] = field.repeated ? (Array.isArray(value) ? value : [value]).map((x) => this.convert(x, mt)) : this.convert(value, mt);
      } else {
        out[field.name] = value;
      }
    }
    if (fields.vendor_extension) {
      const ext = this.extensions(v);
      if (ext.length > 0) out.vendor_extension = ext;
    }
    return out;
  }
}

/** The document as gnostic's openapi.v2.Document, encoded. */
export function encodeOpenAPIV2(doc: Json): Buffer {
  const r = schema();
  const documentType = r.lookupType(`${pkg}.Document`);
  const message = documentType.fromObject(new Converter(r).convert(doc, documentType));
  return Buffer.from(documentType.encode(message).finish());
}

// kubectl's reads of the API's OpenAPI documents against a real agent: `kubectl explain` of a nested
// field with kubectl 1.20 (protobuf /openapi/v2) and 1.32 (/openapi/v3), and kubectl's schema
// validation of a manifest with an unknown field: kubectl 1.20 refuses it itself, as against any
// cluster; kubectl 1.32 finds the fieldValidation parameter in the document and lets the server
// refuse it (Strict).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { useKubectlAgent } from '../fixtures/kubectl-agent.js';
import { kubectl132Path, kubectlMinor, kubectlPath, runKubectl } from './harness.js';

const kubectl120 = process.env.KUBECTL120 || (kubectlMinor === 20 ? kubectlPath : undefined);
const skip = kubectl120 && kubectl132Path ? false : 'needs kubectl 1.20 ($KUBECTL120 or $KUBECTL) and 1.32 ($KUBECTL132)';
const env = useKubectlAgent(skip);

const unknownField = `apiVersion: apps/v1
kind: Deployment
metadata: {name: typo}
spec:
  replicas: 1
  replica: 2
  selector: {matchLabels: {app: typo}}
  template:
    metadata: {labels: {app: typo}}
    spec: {containers: [{name: app, image: busybox, command: [sleep, "60"]}]}
`;

test('kubectl 1.20 explains a nested field from /openapi/v2', { skip }, async (t) => {
  const r = await runKubectl(kubectl120!, env.api(t), ['explain', 'deployment.spec.strategy']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^KIND: +Deployment\nVERSION: +apps\/v1\n\nRESOURCE: strategy <Object>/);
  assert.match(r.stdout, /The deployment strategy to use to replace existing pods with new ones\./);
  assert.match(r.stdout, /rollingUpdate\t<Object>/);
});

test('kubectl 1.32 explains a nested field from /openapi/v3', { skip }, async (t) => {
  const r = await runKubectl(kubectl132Path!, env.api(t), ['explain', 'deployment.spec.strategy.rollingUpdate']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^GROUP: +apps\nKIND: +Deployment\nVERSION: +v1\n\nFIELD: rollingUpdate <RollingUpdateDeployment>/);
  assert.match(r.stdout, /maxSurge\t<IntOrString>/);
});

test('kubectl 1.20 refuses an unknown field with its own schema validation', { skip }, async (t) => {
  const r = await runKubectl(kubectl120!, env.api(t), ['apply', '--validate=true', '-f', '-'], unknownField);
  assert.equal(r.code, 1);
  assert.equal(
    r.stderr.trim(),
    'error: error validating "STDIN": error validating data: ValidationError(Deployment.spec): unknown field "replica" in io.k8s.api.apps.v1.DeploymentSpec; if you choose to ignore these errors, turn validation off with --validate=false',
  );
});

test('kubectl 1.32 sends fieldValidation=Strict, found in /openapi/v3, and the server refuses the unknown field', { skip }, async (t) => {
  const r = await runKubectl(kubectl132Path!, env.api(t), ['apply', '--validate=true', '-f', '-'], unknownField);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /Error from server \(BadRequest\): error when creating "STDIN": .*strict decoding error: unknown field "spec\.replica"/);
});

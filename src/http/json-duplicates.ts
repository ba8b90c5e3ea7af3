// The duplicate keys of a JSON text, by their path (`spec.replicas`, `spec.containers[0].name`): what
// the API server's strict JSON decoding (sigs.k8s.io/json) reports as `duplicate field "<path>"`,
// where JSON.parse keeps the last value in silence. Read after the text parsed, so it may assume
// the text is valid JSON.

type Frame = { kind: 'object'; path: string; keys: Set<string>; key?: string } | { kind: 'array'; path: string; index: number };

function childPath(frame: Frame | undefined): string {
  if (!frame) return '';
  if (frame.kind === 'array') return `${frame.path}[${frame.index}]`;
  return frame.path ? `${frame.path}.${frame.key ?? ''}` : (frame.key ?? '');
}

/** Paths of the keys that appear twice in one object of a valid JSON text, in the order met. */
export function duplicateJSONFields(text: string): string[] {
  const found: string[] = [];
  const stack: Frame[] = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      const top = stack[stack.length - 1];
      if (expectKey && top?.kind === 'object') {
        const key = JSON.parse(text.slice(i, j + 1)) as string;
        if (top.keys.has(key)) found.push(top.path ? `${top.path}.${key}` : key);
        top.keys.add(key);
        top.key = key;
        expectKey = false;
      }
      i = j;
    } else if (c === '{' || c === '[') {
      const path = childPath(stack[stack.length - 1]);
      stack.push(c === '{' ? { kind: 'object', path, keys: new Set() } : { kind: 'array', path, index: 0 });
      expectKey = c === '{';
    } else if (c === '}' || c === ']') {
      stack.pop();
    } else if (c === ',') {
      const top = stack[stack.length - 1];
      if (top?.kind === 'array') top.index++;
      else expectKey = true;
    }
  }
  return found;
}

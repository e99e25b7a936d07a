import type { CodegenConfig } from '@graphql-codegen/cli';
import { addTypenameSelectionDocumentTransform } from '@graphql-codegen/client-preset';

/**
 * Typed documents for the page, from the server's `schema.graphql` and the
 * `graphql(...)` calls in `src/`. `npm run build` runs this first; the output
 * (`src/gql/`) is not committed.
 *
 * `persistedDocuments: true` also writes `src/gql/persisted-documents.json`,
 * the trusted-documents manifest: `{ "sha256:<hex>": "<operation text>" }`
 * for every operation the page can send. The page sends exactly those texts
 * (see `src/apollo.ts`), so a server started with that manifest accepts them.
 * `__typename` is added to every selection here (not by Apollo at run time),
 * so the manifest text is what the cache needs.
 */
const config: CodegenConfig = {
  schema: '../../schema.graphql',
  documents: ['src/**/*.{ts,tsx}', '!src/gql/**/*'],
  ignoreNoDocuments: false,
  generates: {
    'src/gql/': {
      preset: 'client',
      presetConfig: { fragmentMasking: false, persistedDocuments: true },
      documentTransforms: [addTypenameSelectionDocumentTransform],
      config: {
        useTypeImports: true,
        enumsAsTypes: true,
        scalars: { DateTime: 'string', Seq: 'number' },
      },
    },
  },
};

export default config;

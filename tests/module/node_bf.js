// node-redis (Debian's node-redis, @redis/bloom) against bloomkit's module:
// client.bf as its users call it. Prints "node-redis bf: ok" or throws.
'use strict';
const assert = require('assert');
const { createClient, commandOptions } = require('redis');

(async () => {
  const client = createClient({ url: 'redis://127.0.0.1:' + process.env.REDIS_PORT });
  await client.connect();
  try {
    assert.strictEqual(await client.bf.reserve('n1', 0.01, 1000), 'OK');
    assert.strictEqual(await client.bf.add('n1', 'a'), true);
    assert.strictEqual(await client.bf.add('n1', 'a'), false);
    assert.deepStrictEqual(await client.bf.mAdd('n1', ['a', 'b']), [false, true]);
    assert.strictEqual(await client.bf.exists('n1', 'b'), true);
    assert.deepStrictEqual(await client.bf.mExists('n1', ['a', 'zz-absent']), [true, false]);
    assert.deepStrictEqual(await client.bf.insert('n2', ['x', 'y'], { CAPACITY: 500, ERROR: 0.001 }),
      [true, true]);
    const info = await client.bf.info('n2');
    assert.strictEqual(info.capacity, 500);
    assert.strictEqual(info.numberOfFilters, 1);
    assert.strictEqual(info.numberOfInsertedItems, 2);
    assert.strictEqual(info.expansionRate, 2);
    let iterator = 0;
    const chunks = [];
    for (;;) {
      const r = await client.bf.scanDump(commandOptions({ returnBuffers: true }), 'n1', iterator);
      iterator = r.iterator;
      if (iterator === 0) break;
      chunks.push(r);
    }
    for (const c of chunks) await client.bf.loadChunk('n3', c.iterator, c.chunk);
    assert.deepStrictEqual(await client.bf.mExists('n3', ['a', 'b']), [true, true]);
    await assert.rejects(client.bf.reserve('n1', 0.01, 10), /item exists/);
    await assert.rejects(client.bf.info('missing'), /not found/);
    await assert.rejects(client.bf.reserve('n4', 2, 10), /error rate range/);
    await client.set('s', '1');
    await assert.rejects(client.bf.add('s', 'a'), /WRONGTYPE/);
    console.log('node-redis bf: ok');
  } finally {
    await client.quit();
  }
})().catch((e) => { console.error(e); process.exit(1); });

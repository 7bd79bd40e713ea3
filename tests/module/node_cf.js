// node-redis (Debian's node-redis, @redis/bloom) against bloomkit's module:
// client.cf as its users call it. Prints "node-redis cf: ok" or throws.
'use strict';
const assert = require('assert');
const { createClient, commandOptions } = require('redis');

(async () => {
  const client = createClient({ url: 'redis://127.0.0.1:' + process.env.REDIS_PORT });
  await client.connect();
  try {
    assert.strictEqual(await client.cf.reserve('c1', 1000, { BUCKETSIZE: 4, EXPANSION: 2 }), 'OK');
    assert.strictEqual(await client.cf.add('c1', 'a'), true);
    assert.strictEqual(await client.cf.addNX('c1', 'a'), false);
    assert.strictEqual(await client.cf.add('c1', 'a'), true);
    assert.strictEqual(await client.cf.count('c1', 'a'), 2);
    assert.strictEqual(await client.cf.exists('c1', 'a'), true);
    assert.strictEqual(await client.cf.exists('c1', 'zz-absent'), false);
    assert.deepStrictEqual(await client.cf.insert('c2', ['x', 'y'], { CAPACITY: 500 }), [true, true]);
    assert.deepStrictEqual(await client.cf.insertNX('c2', ['x', 'z']), [false, true]);
    assert.strictEqual(await client.cf.del('c1', 'a'), true);
    const info = await client.cf.info('c1');
    assert.strictEqual(info.numberOfBuckets, 512); // 1000 at 93% of four-slot buckets
    assert.strictEqual(info.numberOfFilters, 1);
    assert.strictEqual(info.numberOfInsertedItems, 1);
    assert.strictEqual(info.numberOfDeletedItems, 1);
    assert.strictEqual(info.bucketSize, 4);
    assert.strictEqual(info.expansionRate, 2);
    assert.strictEqual(info.maxIteration, 500); // a keyed filter's default
    let iterator = 0;
    const chunks = [];
    for (;;) {
      const r = await client.cf.scanDump(commandOptions({ returnBuffers: true }), 'c2', iterator);
      iterator = r.iterator;
      if (iterator === 0) break;
      chunks.push(r);
    }
    for (const c of chunks) await client.cf.loadChunk('c3', c.iterator, c.chunk);
    assert.deepStrictEqual(await client.cf.count('c3', 'x'), 1);
    assert.strictEqual(await client.cf.exists('c3', 'z'), true);
    await assert.rejects(client.cf.reserve('c1', 1000), /item exists/);
    await assert.rejects(client.cf.info('missing'), /not found/);
    await client.set('s', '1');
    await assert.rejects(client.cf.add('s', 'a'), /WRONGTYPE/);
    console.log('node-redis cf: ok');
  } finally {
    await client.quit();
  }
})().catch((e) => { console.error(e); process.exit(1); });

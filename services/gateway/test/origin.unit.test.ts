// Which Host a reply may write into absolute links, and which Origin counts as another site.
import { describe, expect, it } from 'vitest';
import type { FastifyRequest } from 'fastify';
import { authorityOf, Origins, parsePublicUrls } from '../src/http/origin';

const req = (host: string, headers: Record<string, string> = {}, protocol = 'http') => ({ host, protocol, headers }) as unknown as FastifyRequest;

describe('Origins', () => {
  it('without PUBLIC_URL believes only a Host naming this machine', () => {
    const o = new Origins([]);
    expect(o.publicBase(req('127.0.0.1:8080'))).toBe('http://127.0.0.1:8080');
    expect(o.publicBase(req('localhost:8080'))).toBe('http://localhost:8080');
    expect(o.publicBase(req('[::1]:8080'))).toBe('http://[::1]:8080');
    expect(o.publicBase(req('evil.example'))).toBeNull();
    expect(o.publicBase(req('evil.example:8080'))).toBeNull();
  });

  it('with PUBLIC_URL answers the matching public address, else the first, never the Host', () => {
    const o = new Origins(parsePublicUrls('https://books.example.org, http://192.168.1.20:8080/'));
    expect(o.publicBase(req('books.example.org', {}, 'https'))).toBe('https://books.example.org');
    expect(o.publicBase(req('192.168.1.20:8080'))).toBe('http://192.168.1.20:8080');
    expect(o.publicBase(req('evil.example'))).toBe('https://books.example.org');
    expect(o.publicBase(req('127.0.0.1:8080'))).toBe('https://books.example.org');
  });

  it('believes no Host that is not a plain authority: user info, a path, a bad port or garbage give paths, or the first public address', () => {
    const forged = [
      'localhost:8080@evil.example',
      '127.0.0.1:8080@evil.example',
      '[::1]:8080@evil.example',
      'evil.example@localhost:8080',
      'localhost:8080/evil.example',
      'localhost:8080?x=1',
      'localhost:8080#x',
      'localhost:99999',
      'localhost:0',
      'localhost:',
      'localhost:8080:1',
      'localhost 8080',
      '[::1',
      '[not-ipv6]:8080',
      '',
    ];
    const own = new Origins([]);
    const pub = new Origins(parsePublicUrls('https://books.example.org'));
    for (const host of forged) {
      expect(own.publicBase(req(host)), host).toBeNull();
      expect(pub.publicBase(req(host)), host).toBe('https://books.example.org');
    }
    expect(pub.publicBase(req('books.example.org@evil.example', {}, 'https'))).toBe('https://books.example.org');
    // a page sent to such a Host is no page of ours
    expect(own.crossSite(req('localhost:8080@evil.example', { origin: 'http://localhost:8080' }))).toBe(true);
  });

  it('reads a Host as a lower-cased authority, or null', () => {
    expect(authorityOf('LocalHost:8080')).toEqual({ name: 'localhost', authority: 'localhost:8080' });
    expect(authorityOf('[::1]')).toEqual({ name: '[::1]', authority: '[::1]' });
    expect(authorityOf('books.example.org')).toEqual({ name: 'books.example.org', authority: 'books.example.org' });
    expect(authorityOf('bindery_gateway:8080')).toEqual({ name: 'bindery_gateway', authority: 'bindery_gateway:8080' });
    expect(authorityOf('a@b')).toBeNull();
    expect(authorityOf('b:65536')).toBeNull();
  });

  it('refuses PUBLIC_URL entries that are not absolute http(s) URLs', () => {
    expect(() => parsePublicUrls('books.example.org')).toThrow('invalid configuration: PUBLIC_URL entry "books.example.org" is not an absolute URL');
    expect(() => parsePublicUrls('ftp://books.example.org')).toThrow('invalid configuration: PUBLIC_URL entry "ftp://books.example.org" must be http or https');
    expect(parsePublicUrls('')).toEqual([]);
  });

  it('calls a request cross-site when its Origin or Referer names another host than the one it was sent to', () => {
    const o = new Origins(parsePublicUrls('https://books.example.org'));
    expect(o.crossSite(req('127.0.0.1:8080'))).toBe(false);
    expect(o.crossSite(req('127.0.0.1:8080', { origin: 'http://127.0.0.1:8080' }))).toBe(false);
    expect(o.crossSite(req('127.0.0.1:8080', { origin: 'https://evil.example' }))).toBe(true);
    expect(o.crossSite(req('127.0.0.1:8080', { origin: 'null' }))).toBe(true);
    expect(o.crossSite(req('127.0.0.1:8080', { referer: 'https://evil.example/x' }))).toBe(true);
    expect(o.crossSite(req('127.0.0.1:8080', { referer: 'http://127.0.0.1:8080/login?redirect=/' }))).toBe(false);
    // behind a proxy the page's origin is a public address
    expect(o.crossSite(req('bindery:8080', { origin: 'https://books.example.org' }))).toBe(false);
  });
});

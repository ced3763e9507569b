// Which Host a reply may write into absolute links, and which Origin counts as another site.
import { describe, expect, it } from 'vitest';
import type { FastifyRequest } from 'fastify';
import { Origins, parsePublicUrls } from '../src/http/origin';

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

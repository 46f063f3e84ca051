% Semantic rules for LLM goals (AutoGPT+P, semantic check).
%
% One DNF disjunct of a goal is checked at a time: its positive literals are
% asserted as holds(Ctx, Atom) and its negated literals as holds_not(Ctx, Atom)
% under a fresh context atom Ctx, every violation/3 is collected, then the facts
% are retracted again (setup_call_cleanup, so even an exception leaves nothing
% behind).  Keeping the context as an argument instead of asserting plain
% on/2 facts lets the rules live in one module without clashing with anything
% else loaded into the same (process-wide) Prolog engine.
%
% Each violation carries a kind (stable, for tests and statistics) and a message
% written for the LLM: it names the objects and states the rule.
% Predicate names follow the AutoGPT+P household domain: on/2, in/2, inhand/2,
% at/2, liquid_in/2.  Replace this file to check another domain.

:- module(affplan_semantic, [check_disjunct/5, violation/3]).

:- dynamic holds/2.
:- dynamic holds_not/2.

%! check_disjunct(+Ctx, +Positive:list, +Negative:list, -Kinds:list, -Messages:list)
check_disjunct(Ctx, Pos, Neg, Kinds, Msgs) :-
    setup_call_cleanup(
        assert_facts(Ctx, Pos, Neg),
        findall(K-M, violation(Ctx, K, M), Vs0),
        ( retractall(holds(Ctx, _)), retractall(holds_not(Ctx, _)) )),
    sort(Vs0, Vs),                      % dedupe, stable order
    pairs_keys_values(Vs, Kinds, Msgs).

assert_facts(Ctx, Pos, Neg) :-
    forall(member(A, Pos), assertz(holds(Ctx, A))),
    forall(member(A, Neg), assertz(holds_not(Ctx, A))).

% Where a (non-liquid) object is placed: on a support or in a container.
placed(Ctx, O, on, P) :- holds(Ctx, on(O, P)).
placed(Ctx, O, in, P) :- holds(Ctx, in(O, P)).

% --- an object is on at most one thing
violation(Ctx, on_two_supports, M) :-
    holds(Ctx, on(O, A)), holds(Ctx, on(O, B)), A @< B,
    format(atom(M), "~w cannot be on both ~w and ~w at the same time: an object is on at most one thing.", [O, A, B]).

% --- an object is in one container ...
violation(Ctx, in_two_containers, M) :-
    holds(Ctx, in(O, A)), holds(Ctx, in(O, B)), A @< B,
    format(atom(M), "~w cannot be in both ~w and ~w at the same time: an object can only be in one container.", [O, A, B]).

% ... and not elsewhere (not also on something)
violation(Ctx, in_and_on, M) :-
    holds(Ctx, in(O, A)), holds(Ctx, on(O, B)),
    format(atom(M), "~w cannot be in ~w and on ~w at the same time: an object in a container is not also on something.", [O, A, B]).

% --- an object in a hand is nowhere else
violation(Ctx, inhand_two_actors, M) :-
    holds(Ctx, inhand(O, A)), holds(Ctx, inhand(O, B)), A @< B,
    format(atom(M), "~w cannot be in the hands of both ~w and ~w: an object in the hand of an actor cannot be in another hand.", [O, A, B]).

violation(Ctx, inhand_and_placed, M) :-
    holds(Ctx, inhand(O, A)), placed(Ctx, O, Rel, P),
    format(atom(M), "~w cannot be in the hand of ~w and ~w ~w at the same time: an object in a hand is nowhere else.", [O, A, Rel, P]).

% --- an actor is at one location
violation(Ctx, actor_two_locations, M) :-
    holds(Ctx, at(A, L1)), holds(Ctx, at(A, L2)), L1 @< L2,
    format(atom(M), "~w cannot be at both ~w and ~w: an actor is at one location at a time.", [A, L1, L2]).

% --- a liquid is in one container
violation(Ctx, liquid_two_containers, M) :-
    holds(Ctx, liquid_in(L, C1)), holds(Ctx, liquid_in(L, C2)), C1 @< C2,
    format(atom(M), "The liquid ~w cannot be in both ~w and ~w: a liquid is in one container.", [L, C1, C2]).

% --- nothing is on/in/held by itself
violation(Ctx, self_reference, M) :-
    member(P, [on, in, inhand, liquid_in, at]),
    A =.. [P, X, X], holds(Ctx, A),
    format(atom(M), "(~w ~w ~w) relates ~w to itself, which is impossible.", [P, X, X, X]).

% --- two objects cannot contain/support each other
violation(Ctx, placement_cycle, M) :-
    placed(Ctx, A, R1, B), placed(Ctx, B, R2, A), A @< B,
    format(atom(M), "~w is ~w ~w while ~w is ~w ~w: two objects cannot be placed on or in each other.", [A, R1, B, B, R2, A]).

% --- the same atom required and forbidden
violation(Ctx, contradiction, M) :-
    holds(Ctx, A), holds_not(Ctx, A),
    A =.. [P|Args], atomic_list_concat([P|Args], ' ', S),
    format(atom(M), "The goal requires both (~w) and (not (~w)), which contradict each other.", [S, S]).
